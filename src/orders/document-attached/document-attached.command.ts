import { OrderCommand } from '../engine/order-command.js';

/** order.document_attached: upload a document to the order's latest payment. */
export class DocumentAttachedCommand extends OrderCommand<'order.document_attached'> {}
