/**
 * OrderRepository, the one owner of the orders table's SQL, for every module that reads or
 * blocks orders (OrdersModule, DeadLettersModule, …): they import this module rather than
 * list the repository among their own providers.
 */
import { Module } from '@nestjs/common';
import { DatabaseModule } from '../database/database.module.js';
import { OrderEntity } from './order.entity.js';
import { OrderRepository } from './order.repository.js';

@Module({
  imports: [DatabaseModule.forFeature([OrderEntity])],
  providers: [OrderRepository],
  exports: [OrderRepository],
})
export class OrderPersistenceModule {}
