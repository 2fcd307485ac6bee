import { createHash, randomUUID } from "node:crypto";
import http from "node:http";
import type { AddressInfo } from "node:net";

// A local Amazon SQS for `npm run dev` and tests: the part of SQS's JSON protocol (AWS JSON 1.0,
// what @aws-sdk/client-sqs speaks) that jobs use, with SQS's semantics where they matter to us:
// delays, the visibility timeout (a message received and not deleted comes back when it ends),
// receive counts, the redrive policy (past maxReceiveCount a message moves to its dead-letter
// queue), and fair queues (a message's MessageGroupId on a standard queue: when one group has a
// backlog, the visible messages of groups with fewer messages in flight are delivered first). Written here because the registry has no SQS server that does these: sqslite (the one
// that installs) speaks only the older XML protocol and, measured, never redelivers a message nor
// moves one to its dead-letter queue; ElasticMQ on npm is its 2013 jar (docs/design.md, "Jobs").

const ACCOUNT = "000000000000";
const REGION = "us-east-1";

interface Message {
  readonly id: string;
  readonly body: string;
  readonly md5: string;
  readonly sentAt: number;
  /** Its message group (a tenant of a fair queue), if it named one. */
  readonly group?: string;
  /** Not receivable before this (a delay, or the visibility timeout of its last receipt). */
  visibleAt: number;
  receiveCount: number;
  firstReceivedAt?: number;
  /** The receipt handle of its last receipt (a delete with an older one is ignored, as SQS does after a redelivery). */
  receipt?: string;
}

interface Queue {
  readonly name: string;
  readonly arn: string;
  readonly url: string;
  visibilitySeconds: number;
  delaySeconds: number;
  redrive?: { deadLetterTargetArn: string; maxReceiveCount: number };
  messages: Message[];
  /** Long polls waiting for a message. */
  waiting: Set<() => void>;
}

class SqsError extends Error {
  constructor(
    readonly type: string,
    readonly queryCode: string,
    message: string,
  ) {
    super(message);
  }
}

const md5 = (text: string) => createHash("md5").update(text, "utf8").digest("hex");

export interface SqsLocal {
  /** The endpoint to give the SDK (SQS_ENDPOINT). */
  readonly endpoint: string;
  stop(): Promise<void>;
}

/** Starts the local SQS on 127.0.0.1 (`port` 0: one the OS picks). */
export async function startSqsLocal(port = 0): Promise<SqsLocal> {
  const queues = new Map<string, Queue>();
  let endpoint = "";

  const queueOf = (url: unknown): Queue => {
    const name = typeof url === "string" ? url.slice(url.lastIndexOf("/") + 1) : "";
    const queue = queues.get(name);
    if (!queue) throw new SqsError("com.amazonaws.sqs#QueueDoesNotExist", "AWS.SimpleQueueService.NonExistentQueue", `The queue ${name} does not exist.`);
    return queue;
  };

  const wake = (queue: Queue) => {
    for (const resolve of queue.waiting) resolve();
  };

  const send = (queue: Queue, body: unknown, delaySeconds: unknown, group: unknown) => {
    if (typeof body !== "string" || body.length === 0)
      throw new SqsError("com.amazonaws.sqs#InvalidParameterValue", "InvalidParameterValue", "MessageBody is required.");
    const now = Date.now();
    const message: Message = {
      id: randomUUID(),
      body,
      md5: md5(body),
      sentAt: now,
      ...(typeof group === "string" && group ? { group } : {}),
      visibleAt: now + 1000 * (typeof delaySeconds === "number" ? delaySeconds : queue.delaySeconds),
      receiveCount: 0,
    };
    queue.messages.push(message);
    if (message.visibleAt <= now) wake(queue);
    else setTimeout(() => wake(queue), message.visibleAt - now).unref();
    return { MessageId: message.id, MD5OfMessageBody: message.md5 };
  };

  /** Up to `max` visible messages, received now; those past the redrive policy move to the dead-letter queue instead. */
  const take = (queue: Queue, max: number, visibilitySeconds: number) => {
    const now = Date.now();
    const taken: Message[] = [];
    // Fair delivery: messages in flight (received, not deleted, not yet visible again) by group; the
    // visible messages of the groups with the fewest go first, in the order they were sent.
    const inFlight = new Map<string, number>();
    for (const message of queue.messages)
      if (message.group !== undefined && message.receiveCount > 0 && message.visibleAt > now)
        inFlight.set(message.group, (inFlight.get(message.group) ?? 0) + 1);
    const visible = queue.messages.filter((message) => message.visibleAt <= now);
    const load = (message: Message) => (message.group === undefined ? 0 : (inFlight.get(message.group) ?? 0));
    for (;;) {
      if (taken.length >= max || !visible.length) break;
      let best = 0;
      for (let i = 1; i < visible.length; i++) if (load(visible[i]!) < load(visible[best]!)) best = i;
      const [message] = visible.splice(best, 1) as [Message];
      if (queue.redrive && message.receiveCount >= queue.redrive.maxReceiveCount) {
        const target = [...queues.values()].find((q) => q.arn === queue.redrive!.deadLetterTargetArn);
        queue.messages = queue.messages.filter((m) => m !== message);
        if (target) {
          target.messages.push({ ...message, visibleAt: now, receiveCount: 0, receipt: undefined });
          wake(target);
        }
        continue;
      }
      if (message.group !== undefined) inFlight.set(message.group, load(message) + 1);
      message.receiveCount++;
      message.firstReceivedAt ??= now;
      message.visibleAt = now + visibilitySeconds * 1000;
      message.receipt = `${message.id}#${randomUUID()}`;
      setTimeout(() => wake(queue), visibilitySeconds * 1000).unref();
      taken.push(message);
    }
    return taken.map((m) => ({
      MessageId: m.id,
      ReceiptHandle: m.receipt!,
      MD5OfBody: m.md5,
      Body: m.body,
      Attributes: {
        ApproximateReceiveCount: String(m.receiveCount),
        SentTimestamp: String(m.sentAt),
        ApproximateFirstReceiveTimestamp: String(m.firstReceivedAt),
      },
    }));
  };

  const receiptOf = (queue: Queue, handle: unknown) => queue.messages.find((m) => m.receipt !== undefined && m.receipt === handle);

  // Inputs as the SDK sends them (JSON of SQS's shapes); each operation reads the members it takes.
  type Input = Record<string, unknown> & { Attributes?: Record<string, string>; Entries?: Record<string, unknown>[] };
  const operations: Record<string, (input: Input) => unknown> = {
    CreateQueue: ({ QueueName, Attributes = {} }) => {
      if (typeof QueueName !== "string" || !/^[\w-]{1,80}$/.test(QueueName))
        throw new SqsError("com.amazonaws.sqs#InvalidParameterValue", "InvalidParameterValue", "QueueName is not valid.");
      const existing = queues.get(QueueName);
      if (existing) return { QueueUrl: existing.url };
      const redrive = Attributes.RedrivePolicy
        ? (JSON.parse(Attributes.RedrivePolicy) as { deadLetterTargetArn: string; maxReceiveCount: string | number })
        : undefined;
      queues.set(QueueName, {
        name: QueueName,
        arn: `arn:aws:sqs:${REGION}:${ACCOUNT}:${QueueName}`,
        url: `${endpoint}/${ACCOUNT}/${QueueName}`,
        visibilitySeconds: Number(Attributes.VisibilityTimeout ?? 30),
        delaySeconds: Number(Attributes.DelaySeconds ?? 0),
        ...(redrive ? { redrive: { deadLetterTargetArn: redrive.deadLetterTargetArn, maxReceiveCount: Number(redrive.maxReceiveCount) } } : {}),
        messages: [],
        waiting: new Set(),
      });
      return { QueueUrl: queues.get(QueueName)!.url };
    },
    GetQueueUrl: ({ QueueName }) => ({ QueueUrl: queueOf(`/${QueueName}`).url }),
    GetQueueAttributes: ({ QueueUrl }) => {
      const queue = queueOf(QueueUrl);
      const now = Date.now();
      return {
        Attributes: {
          QueueArn: queue.arn,
          VisibilityTimeout: String(queue.visibilitySeconds),
          ApproximateNumberOfMessages: String(queue.messages.filter((m) => m.visibleAt <= now).length),
          ApproximateNumberOfMessagesNotVisible: String(queue.messages.filter((m) => m.visibleAt > now && m.receiveCount > 0).length),
          ApproximateNumberOfMessagesDelayed: String(queue.messages.filter((m) => m.visibleAt > now && m.receiveCount === 0).length),
          ...(queue.redrive ? { RedrivePolicy: JSON.stringify(queue.redrive) } : {}),
        },
      };
    },
    SendMessage: ({ QueueUrl, MessageBody, DelaySeconds, MessageGroupId }) => send(queueOf(QueueUrl), MessageBody, DelaySeconds, MessageGroupId),
    SendMessageBatch: ({ QueueUrl, Entries = [] }) => {
      const queue = queueOf(QueueUrl);
      if (!Array.isArray(Entries) || Entries.length < 1 || Entries.length > 10)
        throw new SqsError("com.amazonaws.sqs#TooManyEntriesInBatchRequest", "AWS.SimpleQueueService.TooManyEntriesInBatchRequest", "1 to 10 entries.");
      return {
        Successful: Entries.map((entry) => ({ Id: entry.Id, ...send(queue, entry.MessageBody, entry.DelaySeconds, entry.MessageGroupId) })),
        Failed: [],
      };
    },
    ReceiveMessage: async ({ QueueUrl, MaxNumberOfMessages = 1, WaitTimeSeconds = 0, VisibilityTimeout }) => {
      const queue = queueOf(QueueUrl);
      const visibility = typeof VisibilityTimeout === "number" ? VisibilityTimeout : queue.visibilitySeconds;
      const until = Date.now() + Math.min(20, Number(WaitTimeSeconds)) * 1000;
      for (;;) {
        const messages = take(queue, Math.min(10, Number(MaxNumberOfMessages)), visibility);
        if (messages.length || Date.now() >= until) return messages.length ? { Messages: messages } : {};
        await new Promise<void>((resolve) => {
          const done = () => {
            queue.waiting.delete(done);
            clearTimeout(timer);
            resolve();
          };
          // Wakes at the next message's visibleAt as well as for a send: a timer may fire a
          // millisecond before Date.now() reaches the time it was set for, and a wake that finds
          // nothing visible yet must not sleep out the whole poll.
          const now = Date.now();
          let next = until;
          for (const message of queue.messages) if (message.visibleAt > now && message.visibleAt < next) next = message.visibleAt;
          const timer = setTimeout(done, next - now + 1);
          queue.waiting.add(done);
        });
      }
    },
    DeleteMessage: ({ QueueUrl, ReceiptHandle }) => {
      const queue = queueOf(QueueUrl);
      const message = receiptOf(queue, ReceiptHandle);
      if (message) queue.messages = queue.messages.filter((m) => m !== message);
      return {};
    },
    DeleteMessageBatch: ({ QueueUrl, Entries = [] }) => {
      const queue = queueOf(QueueUrl);
      for (const entry of Entries as { ReceiptHandle: string }[]) {
        const message = receiptOf(queue, entry.ReceiptHandle);
        if (message) queue.messages = queue.messages.filter((m) => m !== message);
      }
      return { Successful: (Entries as { Id: string }[]).map((e) => ({ Id: e.Id })), Failed: [] };
    },
    ChangeMessageVisibility: ({ QueueUrl, ReceiptHandle, VisibilityTimeout }) => {
      const queue = queueOf(QueueUrl);
      const message = receiptOf(queue, ReceiptHandle);
      if (!message) throw new SqsError("com.amazonaws.sqs#ReceiptHandleIsInvalid", "ReceiptHandleIsInvalid", "The receipt handle is not valid.");
      message.visibleAt = Date.now() + Number(VisibilityTimeout) * 1000;
      if (Number(VisibilityTimeout) === 0) wake(queue);
      return {};
    },
    PurgeQueue: ({ QueueUrl }) => {
      queueOf(QueueUrl).messages = [];
      return {};
    },
  };

  const server = http.createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on("data", (chunk: Buffer) => chunks.push(chunk));
    request.on("end", async () => {
      const target = String(request.headers["x-amz-target"] ?? "");
      const operation = operations[target.replace(/^AmazonSQS\./, "")];
      try {
        if (request.method !== "POST" || !operation)
          throw new SqsError("com.amazonaws.sqs#InvalidAction", "InvalidAction", `The action ${target || "(none)"} is not valid for this endpoint.`);
        const input = chunks.length ? (JSON.parse(Buffer.concat(chunks).toString("utf8")) as Record<string, unknown>) : {};
        const output = await operation(input);
        response.writeHead(200, { "content-type": "application/x-amz-json-1.0" }).end(JSON.stringify(output));
      } catch (error) {
        const failure =
          error instanceof SqsError
            ? error
            : new SqsError("com.amazonaws.sqs#InternalError", "InternalError", error instanceof Error ? error.message : String(error));
        response
          .writeHead(failure.type.endsWith("InternalError") ? 500 : 400, {
            "content-type": "application/x-amz-json-1.0",
            "x-amzn-query-error": `${failure.queryCode};Sender`,
          })
          .end(JSON.stringify({ __type: failure.type, message: failure.message }));
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(port, "127.0.0.1", resolve));
  endpoint = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    endpoint,
    stop: () =>
      new Promise<void>((resolve) => {
        for (const queue of queues.values()) wake(queue);
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
