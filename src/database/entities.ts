import { OrderEntity } from '../orders/order.entity.js';
import { InstallmentEntity } from '../payments/installment.entity.js';
import { PaymentEntity } from '../payments/payment.entity.js';

/** Every table's entity, listed explicitly (no globs: the same list works under tsc and jest). */
export const ENTITIES = [OrderEntity, PaymentEntity, InstallmentEntity];
