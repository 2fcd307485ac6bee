import { Duration } from "aws-cdk-lib";
import { Alarm, ComparisonOperator, Metric, TreatMissingData } from "aws-cdk-lib/aws-cloudwatch";
import { SnsAction } from "aws-cdk-lib/aws-cloudwatch-actions";
import { Topic } from "aws-cdk-lib/aws-sns";
import { EmailSubscription } from "aws-cdk-lib/aws-sns-subscriptions";
import { type StackContext, use } from "sst/constructs";
import { RECONCILER_METRICS } from "../lib/packaging.js";
import { Api } from "./Api.js";

/**
 * Alarms an operator subscribes to (docs/deploy.md, "Watching it"): one SNS topic, and alarms on
 * every function's errors and throttles, on the reconciler failing, on x402 settlements left
 * unconfirmed, and on messages in the queues' dead letters. SHOTLINE_ALARM_EMAIL (where `sst deploy` runs) subscribes an address to the topic.
 */
export function Monitoring({ stack, app }: StackContext) {
  const { functions, deadLetters } = use(Api);
  const topic = new Topic(stack, "Alarms", { displayName: `Shotline ${app.stage} alarms` });
  const email = process.env.SHOTLINE_ALARM_EMAIL;
  if (email) topic.addSubscription(new EmailSubscription(email));
  const notify = new SnsAction(topic);
  const alarm = (id: string, metric: Metric, description: string, periods = 1) =>
    new Alarm(stack, id, {
      metric,
      threshold: 1,
      evaluationPeriods: periods,
      comparisonOperator: ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
      treatMissingData: TreatMissingData.NOT_BREACHING,
      alarmDescription: description,
    }).addAlarmAction(notify);
  const fiveMinutes = { period: Duration.minutes(5), statistic: "Sum" };

  for (const [id, fn] of Object.entries(functions)) {
    // Errors a handler did not answer (a crash, a timeout of the Lambda itself): every answered error is JSON and not counted here.
    alarm(`Errors-${id}`, fn.metricErrors(fiveMinutes), `${id}: the function failed (crashed or timed out) in the last 5 minutes`);
    alarm(`Throttles-${id}`, fn.metricThrottles(fiveMinutes), `${id}: invocations were throttled (concurrency exhausted) in the last 5 minutes`);
  }
  // A message its consumer could not handle even to fail it (a job item, a webhook attempt) waits in a dead-letter queue.
  for (const [name, queue] of Object.entries(deadLetters))
    alarm(
      `DeadLetters-${name}`,
      queue.metricApproximateNumberOfMessagesVisible({ period: Duration.minutes(5), statistic: "Maximum" }),
      `${name}: messages are waiting in the dead-letter queue (${name}DeadLetterQueue in the stack's outputs)`,
    );
  // The reconciler's errors are among the above; a settlement waiting 15 minutes on the chain is its own alarm.
  const unconfirmed = new Metric({
    namespace: RECONCILER_METRICS.namespace,
    metricName: RECONCILER_METRICS.pending,
    dimensionsMap: { Stage: app.stage },
    period: Duration.minutes(5),
    statistic: "Minimum",
  });
  alarm("UnconfirmedSettlements", unconfirmed, "x402 settlements have waited on the chain for 15 minutes (the reconciler confirms them)", 3);

  stack.addOutputs({ AlarmTopicArn: topic.topicArn });
  return { topic };
}
