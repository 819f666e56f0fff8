/**
 * DataSource and Database (global) over a data source that its owner opens and closes, for
 * a Nest context that does not own the connection: the CLI composes each command's
 * services in a context of their own over the one pool it opened on first use. The
 * worker uses DatabaseModule, which opens (and migrates) the data source itself.
 *
 *   DataSourceProvidedModule.forRoot(() => owner.dataSource())
 */
import { Module, type DynamicModule } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { Database } from './database.js';

@Module({})
export class DataSourceProvidedModule {
  static forRoot(open: () => Promise<DataSource>): DynamicModule {
    return {
      module: DataSourceProvidedModule,
      global: true,
      providers: [{ provide: DataSource, useFactory: open }, Database],
      exports: [DataSource, Database],
    };
  }
}
