import { InvokeCommand, LambdaClient } from "@aws-sdk/client-lambda";
import { config } from "../config.js";

// The one Lambda call the service makes, in a module of its own so that a bundle holds this command
// alone (a dynamic import of the SDK's package would keep all of its commands: stacks/bundles.ts).

let client: LambdaClient | undefined;

/** Invokes `functionName` asynchronously (Lambda queues the event and answers 202) with `payload`. */
export async function invokeAsync(functionName: string, payload: unknown): Promise<void> {
  client ??= new LambdaClient({ region: config.AWS_REGION });
  await client.send(new InvokeCommand({ FunctionName: functionName, InvocationType: "Event", Payload: JSON.stringify(payload) }));
}
