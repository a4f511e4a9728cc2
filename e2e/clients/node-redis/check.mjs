// node-redis end to end: node check.mjs PORT
// node-redis 6 speaks RESP3 by default (HELLO 3); every step below runs
// over it: strings, hashes, sets, sorted sets, pub/sub, transactions
// (MULTI/EXEC, WATCH), and client-side caching (CLIENT TRACKING, the
// invalidation pushes). Prints one JSON line with what every step saw,
// which e2e/clients_test.go compares between redis-server and Persimmon.
import { createClient, BasicClientSideCache } from 'redis';

const port = parseInt(process.argv[2], 10);
const url = `redis://127.0.0.1:${port}`;
const out = {};

// plain turns RESP3 maps and sets (JavaScript Map, Set, Buffer) into JSON.
const plain = v => JSON.parse(JSON.stringify(v, (_, x) =>
  x instanceof Set ? [...x] : x instanceof Map ? Object.fromEntries(x) : x));

const waitFor = async (what, cond) => {
  const deadline = Date.now() + 10000;
  while (!cond()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise(r => setTimeout(r, 5)); // polling a condition set by a push
  }
};

const c = createClient({ url });
c.on('error', e => { console.error('client error', e); });
await c.connect();
await c.flushAll();
out.proto = (await c.hello()).proto;

// Strings.
out.strings = [
  await c.set('s:a', 'hello'),
  await c.get('s:a'),
  await c.append('s:a', ' world'),
  await c.getRange('s:a', 0, 4),
  await c.incr('s:n'),
  await c.incrBy('s:n', 41),
  await c.incrByFloat('s:f', 1.5),
  await c.mGet(['s:a', 's:n', 's:missing']),
  await c.set('s:ttl', 'x', { EX: 100 }),
  (await c.ttl('s:ttl')) > 90,
  await c.set('s:nx', 'a', { NX: true }),
  await c.set('s:nx', 'b', { NX: true }),
  await c.strLen('s:a'),
  await c.del(['s:a', 's:missing']),
  await c.exists('s:a'),
];

// Hashes (HGETALL is a RESP3 map).
out.hashes = [
  await c.hSet('h', { f1: 'v1', f2: 'v2', n: '10' }),
  await c.hGet('h', 'f1'),
  await c.hGetAll('h'),
  await c.hIncrBy('h', 'n', 5),
  await c.hIncrByFloat('h', 'n', 0.5),
  await c.hExists('h', 'f2'),
  await c.hDel('h', 'f2'),
  await c.hLen('h'),
  (await c.hKeys('h')).sort(),
  await c.hGetAll('nohash'),
];

// Sets (SMEMBERS is a RESP3 set).
out.sets = [
  await c.sAdd('set1', ['a', 'b', 'c', 'd']),
  await c.sAdd('set2', ['c', 'd', 'e']),
  (await c.sMembers('set1')).sort(),
  await c.sIsMember('set1', 'a'),
  await c.smIsMember('set1', ['a', 'z']),
  (await c.sInter(['set1', 'set2'])).sort(),
  (await c.sUnion(['set1', 'set2'])).sort(),
  (await c.sDiff(['set1', 'set2'])).sort(),
  await c.sCard('set1'),
  await c.sRem('set1', 'a'),
];

// Sorted sets (scores are RESP3 doubles).
out.zsets = [
  await c.zAdd('z', [{ score: 1, value: 'one' }, { score: 2.5, value: 'two' }, { score: 3, value: 'three' }]),
  await c.zScore('z', 'two'),
  await c.zIncrBy('z', 2, 'one'),
  await c.zRange('z', 0, -1),
  await c.zRangeWithScores('z', 0, -1),
  await c.zRank('z', 'three'),
  await c.zCard('z'),
  await c.zRangeByScore('z', 2, 3),
  await c.zRem('z', 'two'),
  await c.zScore('z', 'nosuch'),
];

// Pub/sub: a subscribed duplicate receives channel and pattern messages.
const sub = c.duplicate();
sub.on('error', e => { console.error('sub error', e); });
await sub.connect();
const got = [];
await sub.subscribe('news', (msg, ch) => got.push(`${ch}:${msg}`));
await sub.pSubscribe('ev:*', (msg, ch) => got.push(`p ${ch}:${msg}`));
const receivers = [];
for (let i = 0; i < 5; i++) receivers.push(await c.publish('news', `m${i}`));
receivers.push(await c.publish('ev:1', 'x'));
receivers.push(await c.publish('nobody', 'y'));
await waitFor('pub/sub messages', () => got.length >= 6);
out.pubsub = { receivers, got, numsub: await c.pubSubNumSub(['news', 'nobody']) };
await sub.unsubscribe('news');
await sub.pUnsubscribe('ev:*');
await sub.quit();

// Transactions.
const tx = await c.multi().set('t:a', '1').incr('t:a').get('t:a').hSet('t:h', 'f', 'v').exec();
let watchErr = null;
const w = c.duplicate();
await w.connect();
await w.watch('t:a');
await c.set('t:a', 'changed');
try {
  await w.multi().set('t:a', 'from-tx').exec();
} catch (e) {
  watchErr = e.constructor.name;
}
await w.quit();
out.transactions = { tx, watchErr, after: await c.get('t:a') };

// Client-side caching: the second GET is served from the cache; another
// client's write invalidates it (an "invalidate" push) and the next GET
// reads the new value from the server.
const cache = new BasicClientSideCache({ ttl: 0, maxEntries: 0 });
const cc = createClient({ url, RESP: 3, clientSideCache: cache });
cc.on('error', e => { console.error('cache client error', e); });
await cc.connect();
const invalidated = [];
cache.on('invalidate', k => invalidated.push(k === null ? null : k.toString()));
await c.set('cc:k', 'v1');
const reads = [await cc.get('cc:k'), await cc.get('cc:k')];
const s1 = cache.stats();
await c.set('cc:k', 'v2');
await waitFor('invalidation', () => invalidated.includes('cc:k'));
reads.push(await cc.get('cc:k'));
await c.flushAll();
await waitFor('flush invalidation', () => invalidated.includes(null));
reads.push(await cc.get('cc:k'));
const s2 = cache.stats();
out.caching = {
  reads, invalidated,
  hitsBefore: s1.hitCount, missesBefore: s1.missCount,
  hits: s2.hitCount, misses: s2.missCount,
  trackinginfo: plain(await cc.sendCommand(['CLIENT', 'TRACKINGINFO'])),
};
await cc.quit();

await c.quit();
console.log(JSON.stringify(out));
