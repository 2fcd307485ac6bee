import { describe, expect, it } from "vitest";
import { RECONCILER_METRICS } from "../../../lib/packaging.js";
import { metricsLine } from "../../../lib/payments/reconcile.js";

describe("the reconciler's metrics", () => {
  it("are one line of CloudWatch's embedded metric format: refunds and unconfirmed settlements, by stage", () => {
    const now = Date.UTC(2026, 10, 26);
    const line = metricsLine(
      { refunded: 2, confirmed: 1, expired: 0, pending: 3, released: 0, fed: 0, swept: 0, autoTopups: { credited: 0, failed: 0, started: 0 } },
      now,
    );
    expect(line).toEqual({
      _aws: {
        Timestamp: now,
        CloudWatchMetrics: [
          {
            Namespace: "Shotline",
            Dimensions: [["Stage"]],
            Metrics: [
              { Name: "ReconcilerRefunds", Unit: "Count" },
              { Name: "UnconfirmedSettlements", Unit: "Count" },
            ],
          },
        ],
      },
      Stage: "local",
      ReconcilerRefunds: 2,
      UnconfirmedSettlements: 3,
    });
    // Every metric named in the directive has its value on the line (else CloudWatch drops it).
    for (const { Name } of line._aws.CloudWatchMetrics[0]!.Metrics) expect(line).toHaveProperty(Name);
    expect(RECONCILER_METRICS.pending).toBe("UnconfirmedSettlements");
  });
});
