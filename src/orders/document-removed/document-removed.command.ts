import { OrderCommand } from '../engine/order-command.js';

/** order.document_removed: delete a document attached earlier. */
export class DocumentRemovedCommand extends OrderCommand<'order.document_removed'> {}
