import { formatUsd } from 'src/common/money/money';
import { Prices } from 'src/modules/billing/pricing';
import {
  Bill,
  Books,
  costOf,
  expectApiError,
  LedgerEntry,
  pricesOf,
  requestIdOf,
  usd,
  userMessages,
  wireUsageOf,
} from 'test/e2e/billing-helpers';
import { expectError } from 'test/e2e/e2e-helpers';
import { Customer, HttpResult, TestGateway, TestWorker } from 'test/support/gateway';

interface UsageRow {
  date?: string;
  model?: string;
  keyId?: string;
  requests: number;
  promptTokens: number;
  completionTokens: number;
  cachedTokens: number;
  cacheWriteTokens: number;
  reasoningTokens: number;
  cost: string;
}

const dayOf = (iso: string) => iso.slice(0, 10);
const shiftDay = (day: string, days: number) =>
  new Date(Date.parse(`${day}T00:00:00Z`) + days * 86_400_000).toISOString().slice(0, 10);

type Grouping = 'day' | 'model' | 'key';
const FIELD = { day: 'date', model: 'model', key: 'keyId' } as const;
const groupValue = (bill: Bill, grouping: Grouping) =>
  grouping === 'day' ? dayOf(bill.createdAt) : grouping === 'model' ? bill.model : bill.keyId;

/** The usage rows the bills add up to, grouped like GET /console/usage, ordered by the groups in turn. */
function totalsOf(bills: Bill[], groupBy: Grouping | Grouping[]): UsageRow[] {
  const groupings = Array.isArray(groupBy) ? groupBy : [groupBy];
  const totals = new Map<
    string,
    {
      group: string[];
      requests: number;
      promptTokens: number;
      cachedTokens: number;
      cacheWriteTokens: number;
      completionTokens: number;
      reasoningTokens: number;
      cost: bigint;
    }
  >();
  for (const bill of bills) {
    const group = groupings.map((grouping) => groupValue(bill, grouping));
    const id = JSON.stringify(group);
    const total = totals.get(id) ?? {
      group,
      requests: 0,
      promptTokens: 0,
      cachedTokens: 0,
      cacheWriteTokens: 0,
      completionTokens: 0,
      reasoningTokens: 0,
      cost: 0n,
    };
    total.requests += 1;
    total.promptTokens += bill.promptTokens;
    total.completionTokens += bill.completionTokens;
    total.cachedTokens += bill.cachedTokens;
    total.cacheWriteTokens += bill.cacheWriteTokens;
    total.reasoningTokens += bill.reasoningTokens;
    total.cost += usd(bill.cost);
    totals.set(id, total);
  }
  const compare = (a: string[], b: string[]): number =>
    a.map((value, index) => (value < b[index] ? -1 : value > b[index] ? 1 : 0)).find((order) => order !== 0) ?? 0;
  return [...totals.values()]
    .sort((a, b) => compare(a.group, b.group))
    .map((total) => ({
      ...Object.fromEntries(groupings.map((grouping, index) => [FIELD[grouping], total.group[index]])),
      requests: total.requests,
      promptTokens: total.promptTokens,
      cachedTokens: total.cachedTokens,
      cacheWriteTokens: total.cacheWriteTokens,
      completionTokens: total.completionTokens,
      reasoningTokens: total.reasoningTokens,
      cost: formatUsd(total.cost),
    }));
}

/** A CSV text (RFC 4180, as the gateway writes it: fields with no quotes or commas) as rows of fields. */
function csvRows(text: string): string[][] {
  expect(text.endsWith('\r\n')).toBe(true);
  return text
    .slice(0, -2)
    .split('\r\n')
    .map((line) => line.split(','));
}

describe('console money views: usage, bills and ledger', () => {
  let gateway: TestGateway;
  let worker: TestWorker;
  let books: Books;
  let customer: Customer;
  let secondKey: { id: string; key: string };
  const models: { id: string; prices: Prices }[] = [];
  /** Every bill of `customer`, as computed from the responses it got. */
  const expectedBills: { requestId: string; model: string; keyId: string; cost: bigint }[] = [];
  let allBills: Bill[];

  beforeAll(async () => {
    gateway = await TestGateway.start();
    worker = await TestWorker.start();
    books = await Books.open(gateway);
    for (const [input, output] of [
      ['2.5', '10'],
      ['0.15', '0.6'],
    ]) {
      models.push({
        id: await gateway.addModel({ inputPrice: input, outputPrice: output }),
        prices: pricesOf(input, output),
      });
    }
    customer = await gateway.newCustomer({ balance: '10' });
    const created = await gateway.call('POST', '/console/keys', { token: customer.token, body: { name: 'second' } });
    expect(created.status).toBe(201);
    secondKey = { id: created.body.id, key: created.body.key };

    // 3 + 2 on the first key, 2 + 2 on the second; some sent together so bills can share a timestamp.
    const plan: [string, string, number][] = [
      [customer.key, customer.keyId, 0],
      [customer.key, customer.keyId, 0],
      [customer.key, customer.keyId, 0],
      [customer.key, customer.keyId, 1],
      [customer.key, customer.keyId, 1],
      [secondKey.key, secondKey.id, 0],
      [secondKey.key, secondKey.id, 0],
      [secondKey.key, secondKey.id, 1],
      [secondKey.key, secondKey.id, 1],
    ];
    const responses: HttpResult[] = await Promise.all(
      plan.map(([key], index) =>
        gateway.chat(key, {
          model: models[plan[index][2]].id,
          messages: userMessages(`Views request ${index}`),
          mock: { reply: 'word '.repeat(index + 1) },
        }),
      ),
    );
    responses.forEach((response, index) => {
      expect(response.status).toBe(200);
      const [, keyId, modelIndex] = plan[index];
      expectedBills.push({
        requestId: requestIdOf(response),
        model: models[modelIndex].id,
        keyId,
        cost: costOf(models[modelIndex].prices, wireUsageOf(response.body.usage)),
      });
    });
    const total = expectedBills.reduce((sum, bill) => sum + bill.cost, 0n);
    expect(await books.waitForBalance(customer, usd('10') - total)).toBe(usd('10') - total);
    allBills = await books.bills(customer);
  });
  afterEach(() => books.expectBalanced());
  afterAll(async () => {
    await books.close();
    await worker.close();
    await gateway.close();
  });

  const get = (path: string, token = customer.token) => gateway.call('GET', path, { token });
  const firstDay = () => allBills.map((bill) => dayOf(bill.createdAt)).sort()[0];
  const lastDay = () => allBills.map((bill) => dayOf(bill.createdAt)).sort()[allBills.length - 1];

  it('should list one bill per request with the cost charged, newest first', async () => {
    expect(allBills).toHaveLength(expectedBills.length);
    expect(
      allBills.map((bill) => ({ requestId: bill.requestId, model: bill.model, keyId: bill.keyId, cost: bill.cost })),
    ).toEqual(expect.arrayContaining(expectedBills.map((bill) => ({ ...bill, cost: formatUsd(bill.cost) }))));
    const times = allBills.map((bill) => Date.parse(bill.createdAt));
    expect(times).toEqual([...times].sort((a, b) => b - a));
    expect(await books.waitForNoHolds(customer.accountId)).toBe(0n);
  });

  it.each(['day', 'model', 'key'] as const)('should add up to the bills with groupBy=%s', async (groupBy) => {
    const response = await get(`/console/usage?groupBy=${groupBy}`);

    expect(response.status).toBe(200);
    expect(response.body.data).toEqual(totalsOf(allBills, groupBy));
  });

  it.each([
    ['day,model', ['day', 'model']],
    ['model,key', ['model', 'key']],
    ['key,day,model', ['key', 'day', 'model']],
    ['day&groupBy=model', ['day', 'model']],
  ] as [string, Grouping[]][])('should total by several columns with groupBy=%s', async (query, groupings) => {
    const response = await get(`/console/usage?groupBy=${query}`);

    expect(response.status).toBe(200);
    const expected = totalsOf(allBills, groupings);
    expect(response.body.data).toEqual(expected);
    // Two models on one day give two rows for that day, not one.
    if (groupings.includes('model')) {
      expect(expected.length).toBeGreaterThanOrEqual(2);
    }
  });

  it('should answer the usage as CSV for Accept: text/csv, with a header row and exact money', async () => {
    const response = await gateway.call('GET', '/console/usage?groupBy=day,model', {
      token: customer.token,
      headers: { accept: 'text/csv' },
    });

    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('text/csv; charset=utf-8');
    const rows = csvRows(response.text);
    expect(rows[0]).toEqual([
      'date',
      'model',
      'requests',
      'promptTokens',
      'cachedTokens',
      'cacheWriteTokens',
      'completionTokens',
      'reasoningTokens',
      'cost',
    ]);
    expect(rows.slice(1)).toEqual(
      totalsOf(allBills, ['day', 'model']).map((row) => [
        row.date,
        row.model,
        String(row.requests),
        String(row.promptTokens),
        String(row.cachedTokens),
        String(row.cacheWriteTokens),
        String(row.completionTokens),
        String(row.reasoningTokens),
        row.cost,
      ]),
    );
    // JSON stays the answer for everyone else.
    const json = await gateway.call('GET', '/console/usage', { token: customer.token, headers: { accept: '*/*' } });
    expect(json.headers.get('content-type')).toMatch(/^application\/json/);
  });

  it('should answer the bills as CSV, a page at a time with the next cursor in x-next-cursor', async () => {
    const csvOf = (query: string) =>
      gateway.call('GET', `/console/bills?${query}`, { token: customer.token, headers: { accept: 'text/csv' } });
    const header = [
      'requestId',
      'createdAt',
      'model',
      'keyId',
      'promptTokens',
      'cachedTokens',
      'cacheWriteTokens',
      'completionTokens',
      'reasoningTokens',
      'cost',
      'clientRequestId',
    ];
    const asRow = (bill: Bill) => [
      bill.requestId,
      bill.createdAt,
      bill.model,
      bill.keyId,
      String(bill.promptTokens),
      String(bill.cachedTokens),
      String(bill.cacheWriteTokens),
      String(bill.completionTokens),
      String(bill.reasoningTokens),
      bill.cost,
      // None of these requests sent an X-Request-Id of its own: an empty cell.
      '',
    ];

    const all = await csvOf('limit=200');
    expect(all.status).toBe(200);
    expect(all.headers.get('content-type')).toBe('text/csv; charset=utf-8');
    expect(all.headers.get('x-next-cursor')).toBeNull();
    expect(csvRows(all.text)).toEqual([header, ...allBills.map(asRow)]);

    const first = await csvOf('limit=4');
    expect(csvRows(first.text)).toEqual([header, ...allBills.slice(0, 4).map(asRow)]);
    const cursor = first.headers.get('x-next-cursor')!;
    const second = await csvOf(`limit=4&cursor=${encodeURIComponent(cursor)}`);
    expect(csvRows(second.text)).toEqual([header, ...allBills.slice(4, 8).map(asRow)]);
  });

  it('should answer a refused CSV request with the JSON error, not as CSV', async () => {
    for (const path of ['/console/usage?from=2026-02-30', '/console/bills?from=2026-03-02&to=2026-03-01']) {
      const response = await gateway.call('GET', path, { token: customer.token, headers: { accept: 'text/csv' } });
      expectError(response, 400, { type: 'invalid_request_error', param: 'from' });
      expect(response.headers.get('content-type')).toMatch(/^application\/json/);
    }
  });

  it('should answer an empty CSV with its header row only', async () => {
    const stranger = await gateway.newCustomer({ balance: '0' });
    const response = await gateway.call('GET', '/console/usage?groupBy=key', {
      token: stranger.token,
      headers: { accept: 'text/csv' },
    });
    expect(response.text).toBe(
      'keyId,requests,promptTokens,cachedTokens,cacheWriteTokens,completionTokens,reasoningTokens,cost\r\n',
    );
  });

  it('should group by day when groupBy is left out', async () => {
    const response = await get('/console/usage');

    expect(response.status).toBe(200);
    expect(response.body.data).toEqual(totalsOf(allBills, 'day'));
  });

  it('should filter usage by model, key and date range like the bills', async () => {
    const [model] = models;
    const cases: [string, (bill: Bill) => boolean][] = [
      [`model=${encodeURIComponent(model.id)}`, (bill) => bill.model === model.id],
      [`keyId=${secondKey.id}`, (bill) => bill.keyId === secondKey.id],
      [
        `model=${encodeURIComponent(model.id)}&keyId=${customer.keyId}`,
        (bill) => bill.model === model.id && bill.keyId === customer.keyId,
      ],
      [`from=${firstDay()}&to=${lastDay()}`, () => true],
      [`from=${shiftDay(lastDay(), 1)}`, () => false],
      [`to=${shiftDay(firstDay(), -1)}`, () => false],
      [`model=no-such-model`, () => false],
    ];
    for (const [query, keep] of cases) {
      const selected = allBills.filter(keep);
      for (const groupBy of ['day', 'model', 'key'] as const) {
        const usage = await get(`/console/usage?groupBy=${groupBy}&${query}`);
        expect({ query, groupBy, status: usage.status, data: usage.body.data }).toEqual({
          query,
          groupBy,
          status: 200,
          data: totalsOf(selected, groupBy),
        });
      }
      const bills = await get(`/console/bills?limit=200&${query}`);
      expect({ query, status: bills.status, ids: bills.body.data.map((bill: Bill) => bill.requestId) }).toEqual({
        query,
        status: 200,
        ids: selected.map((bill) => bill.requestId),
      });
    }
  });

  it('should show another account none of these bills, usage or ledger entries', async () => {
    const stranger = await gateway.newCustomer({ balance: '0' });

    expect((await get('/console/bills', stranger.token)).body).toEqual({ data: [], nextCursor: null });
    expect((await get('/console/usage', stranger.token)).body).toEqual({ data: [] });
    expect((await get('/console/ledger', stranger.token)).body).toEqual({ data: [], nextCursor: null });
  });

  it('should page through the bills with nextCursor, without repeats or gaps', async () => {
    for (const filter of ['', `&model=${encodeURIComponent(models[0].id)}`]) {
      const pages: Bill[][] = [];
      let cursor: string | null = null;
      do {
        const query: string = `/console/bills?limit=2${filter}${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`;
        const page = await get(query);
        expect(page.status).toBe(200);
        expect(page.body.data.length).toBeLessThanOrEqual(2);
        pages.push(page.body.data);
        cursor = page.body.nextCursor;
        expect(pages.length).toBeLessThan(20);
      } while (cursor);

      const expected = filter ? allBills.filter((bill) => bill.model === models[0].id) : allBills;
      expect(pages.flat()).toEqual(expected);
      expect(pages.slice(0, -1).every((page) => page.length === 2)).toBe(true);
      expect(pages.length).toBe(Math.ceil(expected.length / 2));
    }
  });

  it('should page through the ledger with nextCursor, newest first, every balanceAfter chaining', async () => {
    const full = await books.ledger(customer);
    expect(full.map((entry) => entry.kind).sort()).toEqual(['adjustment', ...expectedBills.map(() => 'usage')]);
    const pages: LedgerEntry[][] = [];
    let cursor: string | null = null;
    do {
      const page: HttpResult = await get(
        `/console/ledger?limit=2${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`,
      );
      expect(page.status).toBe(200);
      pages.push(page.body.data);
      cursor = page.body.nextCursor;
      expect(pages.length).toBeLessThan(20);
    } while (cursor);

    expect(pages.flat()).toEqual(full);
    expect(new Set(full.map((entry) => entry.id)).size).toBe(full.length);
    const oldestFirst = [...full].reverse();
    let balance = 0n;
    for (const entry of oldestFirst) {
      balance += usd(entry.amount);
      expect({ id: entry.id, balanceAfter: entry.balanceAfter }).toEqual({
        id: entry.id,
        balanceAfter: formatUsd(balance),
      });
    }
    expect(formatUsd(balance)).toBe(formatUsd(await books.balance(customer)));
    const usageByReference = new Map(
      oldestFirst.filter((entry) => entry.kind === 'usage').map((entry) => [entry.reference, entry.amount]),
    );
    expect(Object.fromEntries(usageByReference)).toEqual(
      Object.fromEntries(expectedBills.map((bill) => [bill.requestId, formatUsd(-bill.cost)])),
    );
    const days = full.map((entry) => dayOf(entry.createdAt)).sort();
    const inRange = await get(`/console/ledger?limit=200&from=${days[0]}&to=${days[days.length - 1]}`);
    expect(inRange.body.data).toEqual(full);
    const after = await get(`/console/ledger?from=${shiftDay(days[days.length - 1], 1)}`);
    expect(after.body).toEqual({ data: [], nextCursor: null });
  });

  describe('bad query parameters', () => {
    const badCursor = Buffer.from(JSON.stringify(['not a time', 'x'])).toString('base64url');
    it.each([
      ['/console/usage?from=2026-02-30', 'from'],
      ['/console/usage?to=2026-02-30', 'to'],
      ['/console/usage?from=tomorrow', 'from'],
      ['/console/usage?to=tomorrow', 'to'],
      ['/console/usage?from=2026-13-01', 'from'],
      ['/console/usage?from=2026-03-02&to=2026-03-01', 'from'],
      ['/console/usage?groupBy=week', 'groupBy'],
      ['/console/usage?groupBy=day,week', 'groupBy'],
      ['/console/usage?groupBy=day,day', 'groupBy'],
      ['/console/usage?groupBy=', 'groupBy'],
      ['/console/usage?groupBy=day,', 'groupBy'],
      ['/console/usage?keyId=not-a-uuid', 'keyId'],
      ['/console/bills?from=2026-02-30', 'from'],
      ['/console/bills?to=tomorrow', 'to'],
      ['/console/bills?from=2026-03-02&to=2026-03-01', 'from'],
      ['/console/bills?keyId=not-a-uuid', 'keyId'],
      ['/console/bills?cursor=garbage', 'cursor'],
      [`/console/bills?cursor=${badCursor}`, 'cursor'],
      ['/console/bills?limit=0', 'limit'],
      ['/console/bills?limit=201', 'limit'],
      ['/console/bills?limit=two', 'limit'],
      ['/console/ledger?from=2026-02-30', 'from'],
      ['/console/ledger?to=tomorrow', 'to'],
      ['/console/ledger?cursor=garbage', 'cursor'],
      [`/console/ledger?cursor=${badCursor}`, 'cursor'],
      ['/console/ledger?limit=0', 'limit'],
    ])('should answer 400 naming the parameter for %s', async (path, param) => {
      const response = await get(path);

      expectApiError(response, 400, { code: null, param });
    });

    it('should accept a leap day and an empty range', async () => {
      const response = await get('/console/usage?from=2028-02-29&to=2028-02-29');

      expect(response.status).toBe(200);
      expect(response.body).toEqual({ data: [] });
    });
  });
});
