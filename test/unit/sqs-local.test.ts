import {
  ChangeMessageVisibilityCommand,
  CreateQueueCommand,
  DeleteMessageCommand,
  GetQueueAttributesCommand,
  ReceiveMessageCommand,
  SendMessageBatchCommand,
  SendMessageCommand,
  SQSClient,
} from "@aws-sdk/client-sqs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { LOCAL_CREDENTIALS } from "../../dev/ports.js";
import { type SqsLocal, startSqsLocal } from "../../dev/sqs-local.js";

// The local SQS of `npm run dev` through the real @aws-sdk/client-sqs (its JSON protocol and its
// MD5 checks): delays, the visibility timeout bringing an undeleted message back, receive counts,
// the redrive policy moving a message to its dead-letter queue, long polls woken by a send.

let sqs: SqsLocal;
let client: SQSClient;
beforeAll(async () => {
  sqs = await startSqsLocal();
  client = new SQSClient({ endpoint: sqs.endpoint, region: "us-east-1", credentials: LOCAL_CREDENTIALS });
});
afterAll(async () => {
  client.destroy();
  await sqs.stop();
});

const queue = async (name: string, attributes: Record<string, string> = {}) =>
  (await client.send(new CreateQueueCommand({ QueueName: name, Attributes: attributes }))).QueueUrl!;
const receive = (url: string, wait = 0) =>
  client.send(
    new ReceiveMessageCommand({ QueueUrl: url, MaxNumberOfMessages: 10, WaitTimeSeconds: wait, MessageSystemAttributeNames: ["ApproximateReceiveCount"] }),
  );

describe("the local SQS", () => {
  it("sends in batches, delivers, and a deleted message is gone; an undeleted one comes back after its visibility timeout", async () => {
    const url = await queue("plain", { VisibilityTimeout: "1" });
    const sent = await client.send(
      new SendMessageBatchCommand({
        QueueUrl: url,
        Entries: [
          { Id: "a", MessageBody: "one" },
          { Id: "b", MessageBody: "two" },
        ],
      }),
    );
    expect(sent.Successful?.map((s) => s.Id)).toEqual(["a", "b"]);
    const first = await receive(url);
    expect(first.Messages?.map((m) => m.Body)).toEqual(["one", "two"]);
    await client.send(new DeleteMessageCommand({ QueueUrl: url, ReceiptHandle: first.Messages![0]!.ReceiptHandle }));
    expect((await receive(url)).Messages).toBeUndefined();
    // The visibility timeout ends: "two" again, received a second time.
    const again = await receive(url, 3);
    expect(again.Messages?.map((m) => [m.Body, m.Attributes?.ApproximateReceiveCount])).toEqual([["two", "2"]]);
  });

  it("moves a message received past maxReceiveCount to the dead-letter queue", async () => {
    const dlq = await queue("dead");
    const arn = (await client.send(new GetQueueAttributesCommand({ QueueUrl: dlq, AttributeNames: ["QueueArn"] }))).Attributes!.QueueArn!;
    const url = await queue("redriven", { VisibilityTimeout: "0", RedrivePolicy: JSON.stringify({ deadLetterTargetArn: arn, maxReceiveCount: "2" }) });
    await client.send(new SendMessageCommand({ QueueUrl: url, MessageBody: "poison" }));
    expect((await receive(url)).Messages?.[0]?.Body).toBe("poison");
    expect((await receive(url)).Messages?.[0]?.Body).toBe("poison");
    expect((await receive(url)).Messages).toBeUndefined();
    expect((await receive(dlq)).Messages?.map((m) => m.Body)).toEqual(["poison"]);
  });

  it("holds a delayed message back; a long poll wakes for a send; a visibility change releases a message at once", async () => {
    const url = await queue("delayed");
    await client.send(new SendMessageCommand({ QueueUrl: url, MessageBody: "later", DelaySeconds: 1 }));
    expect((await receive(url)).Messages).toBeUndefined();
    const started = Date.now();
    expect((await receive(url, 5)).Messages?.[0]?.Body).toBe("later");
    expect(Date.now() - started).toBeLessThan(4_000);
    const polling = receive(url, 5);
    await client.send(new SendMessageCommand({ QueueUrl: url, MessageBody: "now" }));
    const woken = await polling;
    expect(woken.Messages?.map((m) => m.Body)).toContain("now");
    const handle = woken.Messages!.find((m) => m.Body === "now")!.ReceiptHandle!;
    await client.send(new ChangeMessageVisibilityCommand({ QueueUrl: url, ReceiptHandle: handle, VisibilityTimeout: 0 }));
    expect((await receive(url)).Messages?.map((m) => m.Body)).toContain("now");
  });

  it("answers an unknown queue as SQS does", async () => {
    await expect(client.send(new SendMessageCommand({ QueueUrl: `${sqs.endpoint}/000000000000/missing`, MessageBody: "x" }))).rejects.toMatchObject({
      name: "QueueDoesNotExist",
    });
  });

  it("delivers fairly across message groups: a group with messages in flight waits behind one with none, in send order otherwise", async () => {
    const url = await queue("fair", { VisibilityTimeout: "60" });
    const one = (body: string, group: string) => client.send(new SendMessageCommand({ QueueUrl: url, MessageBody: body, MessageGroupId: group }));
    for (let i = 0; i < 6; i++) await one(`busy-${i}`, "busy");
    const takeOne = async () =>
      (await client.send(new ReceiveMessageCommand({ QueueUrl: url, MaxNumberOfMessages: 1, WaitTimeSeconds: 0 }))).Messages?.[0]?.Body;
    expect([await takeOne(), await takeOne()]).toEqual(["busy-0", "busy-1"]);
    // Sent after six of the busy group's: delivered next, ahead of its backlog.
    await one("quiet-0", "quiet");
    await one("quiet-1", "quiet");
    expect(await takeOne()).toBe("quiet-0");
    // Now quiet has one in flight and busy two: quiet's next goes first again, then busy's in order.
    expect(await takeOne()).toBe("quiet-1");
    expect(await takeOne()).toBe("busy-2");
    // Ten at once: shared out by what each group has in flight.
    await one("quiet-2", "quiet");
    const batch = (await client.send(new ReceiveMessageCommand({ QueueUrl: url, MaxNumberOfMessages: 10 }))).Messages!.map((m) => m.Body);
    expect(batch).toEqual(["quiet-2", "busy-3", "busy-4", "busy-5"]);
  });
});
