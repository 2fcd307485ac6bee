// A jobs worker in a process of its own, for a test to kill mid-item (test/integration/jobs-sweep.test.ts):
// runs one item's message as the worker does on that delivery (lib/jobs/run.ts), with the worker
// time limit the test gives it, in the environment its parent set (the shared stack's table and
// bucket, the parent's own queues). Usage: node --import tsx test/helpers/worker-child.ts <message
// JSON> <receive count> <worker limit ms>
const [message, receives, limitMs] = process.argv.slice(2);
const { runItem } = await import("../../lib/jobs/run.js");
await runItem(JSON.parse(message!), Number(receives), Date.now(), Number(limitMs));
process.exit(0);
