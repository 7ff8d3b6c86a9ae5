import { PaymentOrder } from 'src/modules/payments/providers/payment-provider';
import { formatAmount } from 'src/values/amounts';
import { orderNoOf, TopupOrderEntity } from 'src/modules/payments/orders/topup-order.entity';

/** Shown to the payer in the wallet. */
export const ORDER_SUBJECT = 'Gateway balance top-up';

/** The provider's view of an order, for its calls. */
export function paymentOrderOf(order: TopupOrderEntity): PaymentOrder {
  return {
    orderNo: orderNoOf(order.id),
    amount: formatAmount(order.amount, 'CNY'),
    amountFen: order.amount,
    subject: ORDER_SUBJECT,
    expiresAt: order.expiresAt ?? new Date(),
  };
}
