// BullMQ end to end: node check.mjs PORT QUEUE PHASE N
//   PHASE add:  add N jobs (every 10th fails twice then succeeds, every
//               25th always fails, every 50th+1 is delayed 200 ms)
//   PHASE work: process the queue until every job has completed or failed
//   PHASE all:  add, then work
// Prints one JSON line: what was processed and BullMQ's job counts.
import { Queue, Worker } from 'bullmq';

const [port, queueName, phase, nArg] = process.argv.slice(2);
const N = parseInt(nArg, 10);
const connection = { host: '127.0.0.1', port: parseInt(port, 10), maxRetriesPerRequest: null };
const queue = new Queue(queueName, { connection });
const out = { added: 0 };

if (phase === 'add' || phase === 'all') {
  const jobs = [];
  for (let i = 0; i < N; i++) {
    const data = { i, failTwice: i % 10 === 0 && i % 25 !== 0, alwaysFail: i % 25 === 0 };
    const opts = { jobId: `job-${i}` };
    if (data.failTwice) Object.assign(opts, { attempts: 3, backoff: { type: 'fixed', delay: 10 } });
    if (i % 50 === 1) opts.delay = 200;
    jobs.push({ name: 'j', data, opts });
  }
  await queue.addBulk(jobs);
  out.added = N;
}

if (phase === 'work' || phase === 'all') {
  const attempts = new Map();
  const worker = new Worker(queueName, async job => {
    attempts.set(job.id, (attempts.get(job.id) || 0) + 1);
    if (job.data.alwaysFail) throw new Error('always');
    if (job.data.failTwice && job.attemptsMade < 2) throw new Error('twice');
    return job.data.i * 2;
  }, { connection, concurrency: 10 });
  const deadline = Date.now() + 60000;
  for (;;) {
    const c = await queue.getJobCounts('completed', 'failed');
    if (c.completed + c.failed >= N || Date.now() > deadline) break;
    await new Promise(r => setTimeout(r, 50)); // polling the queue's counts
  }
  await worker.close();
  let wrong = 0;
  for (let i = 0; i < N; i += 7) {
    const job = await queue.getJob(`job-${i}`);
    const want = (i % 25 === 0) ? undefined : i * 2;
    if (!job || job.returnvalue !== want && !(want === undefined && job.returnvalue == null)) wrong++;
  }
  out.wrongResults = wrong;
  out.attempts = [...attempts.values()].reduce((a, b) => a + b, 0);
}
out.counts = await queue.getJobCounts();
await queue.close();
console.log(JSON.stringify(out));
process.exit(0);
