import { TopupOrderEntity } from 'src/modules/payments/orders/topup-order.entity';
import { TopupOrdersRepository } from 'src/modules/payments/orders/topup-orders.repository';
import { TestDb } from 'test/integration/integration-helpers';

const WINDOW_HOURS = 24;
const MIN_INTERVAL_MS = 5 * 60_000;
const BATCH = 10_000;

interface OrderShape {
  status?: 'pending' | 'expired';
  /** Minutes since the order expired. */
  expiredMinutesAgo: number;
  /** Minutes since its last late check; undefined: never checked. */
  checkedMinutesAgo?: number;
  closed?: boolean;
  network?: string;
}

describe('TopupOrdersRepository.lateDue: which expired orders are asked about again', () => {
  let db: TestDb;
  let orders: TopupOrdersRepository;
  let accountId: string;

  beforeAll(async () => {
    db = await TestDb.open();
    orders = new TopupOrdersRepository(db.dataSource.getRepository(TopupOrderEntity));
    accountId = await db.newAccount();
  });
  afterAll(() => db.close());

  /** An order of the shape, written as the gateway leaves one; its id. */
  const orderOf = async (shape: OrderShape): Promise<string> => {
    const usdt = shape.network !== undefined;
    const [{ id }] = await db.dataSource.query<{ id: string }[]>(
      `INSERT INTO topup_orders (account_id, status, currency, method, network, amount, credit, expires_at,
                                 closed_at, late_checked_at)
       VALUES ($1, $2, $3, $4, $5, 7200, 10000000000, now() - make_interval(mins => $6),
               CASE WHEN $7 THEN now() END, now() - make_interval(mins => $8::int))
       RETURNING id`,
      [
        accountId,
        shape.status ?? 'expired',
        usdt ? 'USDT' : 'CNY',
        usdt ? null : 'alipay',
        shape.network ?? null,
        shape.expiredMinutesAgo,
        shape.closed ?? false,
        shape.checkedMinutesAgo ?? null,
      ],
    );
    return id;
  };
  /** Which of `ids` the sweep picks now. */
  const picked = async (ids: string[]) => {
    const due = new Set(await orders.lateDue(WINDOW_HOURS, MIN_INTERVAL_MS, BATCH));
    return ids.filter((id) => due.has(id));
  };

  it('should pick an expired order never asked again, within the window, and not twice in a row', async () => {
    const fresh = await orderOf({ expiredMinutesAgo: 2 });
    const old = await orderOf({ expiredMinutesAgo: 24 * 60 - 5 });
    const outside = await orderOf({ expiredMinutesAgo: 24 * 60 + 5 });

    expect(await picked([fresh, old, outside])).toEqual([fresh, old]);
    expect(await picked([fresh, old, outside])).toEqual([]);
  });

  it('should wait half the age the order had at its last check, at least the minimum and at most an hour', async () => {
    // Checked at 9 min of age: waits the 5 min minimum, not 4.5.
    const minimumNotYet = await orderOf({ expiredMinutesAgo: 13, checkedMinutesAgo: 4 });
    const minimumDue = await orderOf({ expiredMinutesAgo: 15, checkedMinutesAgo: 6 });
    // Checked at 40 min of age: waits 20 min.
    const halfNotYet = await orderOf({ expiredMinutesAgo: 55, checkedMinutesAgo: 15 });
    const halfDue = await orderOf({ expiredMinutesAgo: 61, checkedMinutesAgo: 21 });
    // Checked at 10 h of age: waits an hour, not 5 h.
    const hourNotYet = await orderOf({ expiredMinutesAgo: 650, checkedMinutesAgo: 50 });
    const hourDue = await orderOf({ expiredMinutesAgo: 665, checkedMinutesAgo: 65 });

    expect(await picked([minimumNotYet, minimumDue, halfNotYet, halfDue, hourNotYet, hourDue])).toEqual([
      minimumDue,
      halfDue,
      hourDue,
    ]);
  });

  it('should leave out orders closed at the wallet, still pending, or in USDT', async () => {
    const closed = await orderOf({ expiredMinutesAgo: 2, closed: true });
    const pending = await orderOf({ status: 'pending', expiredMinutesAgo: 2 });
    const usdt = await orderOf({ expiredMinutesAgo: 2, network: 'TRC20' });

    expect(await picked([closed, pending, usdt])).toEqual([]);
  });
});
