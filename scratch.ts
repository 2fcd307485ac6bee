import http from "node:http";
import { createPublicClient, createWalletClient, http as viemHttp, defineChain, publicActions } from "viem";
import { privateKeyToAccount } from "viem/accounts";
import { x402Facilitator } from "@x402/core/facilitator";
import { registerExactEvmScheme as registerFacilitator } from "@x402/evm/exact/facilitator";
import { toFacilitatorEvmSigner } from "@x402/evm";
import { x402Client } from "@x402/core/client";
import { registerExactEvmScheme as registerClient } from "@x402/evm/exact/client";
import { wrapFetchWithPayment } from "@x402/fetch";
const { startLocalChain } = await import("./lib/local/chain.ts");
const chain = await startLocalChain(8598);
try {
  const c = defineChain({ id: 84532, name: "local", nativeCurrency: { name: "E", symbol: "E", decimals: 18 }, rpcUrls: { default: { http: [chain.rpcUrl] } } });
  const facAccount = privateKeyToAccount(chain.facilitatorPrivateKey);
  const wallet = createWalletClient({ account: facAccount, chain: c, transport: viemHttp(chain.rpcUrl) }).extend(publicActions);
  const signer = toFacilitatorEvmSigner({ ...wallet, address: facAccount.address } as never);
  const facilitator = new x402Facilitator();
  registerFacilitator(facilitator, { signer, networks: "eip155:84532" });
  const requirements = { scheme: "exact", network: "eip155:84532", asset: chain.usdcAddress, amount: "5000", payTo: chain.payTo, maxTimeoutSeconds: 60, extra: { name: "USD Coin", version: "2" } };
  const server = http.createServer(async (req, res) => {
    const sig = req.headers["payment-signature"] as string | undefined;
    console.log("server got", req.url, Object.keys(req.headers).filter(h => /pay/i.test(h)));
    if (!sig) {
      const pr = { x402Version: 2, error: "payment required", resource: { url: "http://x/res", description: "d", mimeType: "image/png" }, accepts: [requirements] };
      res.writeHead(402, { "content-type": "application/json", "PAYMENT-REQUIRED": Buffer.from(JSON.stringify(pr)).toString("base64") }).end(JSON.stringify({ error: { code: "PAYMENT_REQUIRED" } }));
      return;
    }
    const payload = JSON.parse(Buffer.from(sig, "base64").toString());
    console.log("payload keys", Object.keys(payload), payload.accepted?.amount);
    const v = await facilitator.verify(payload, requirements as never);
    console.log("verify", v);
    const s = await facilitator.settle(payload, requirements as never);
    console.log("settle", s);
    res.writeHead(200, { "PAYMENT-RESPONSE": Buffer.from(JSON.stringify(s)).toString("base64") }).end("ok");
  });
  await new Promise<void>(r => server.listen(0, "127.0.0.1", r));
  const port = (server.address() as any).port;
  const client = new x402Client();
  registerClient(client, { signer: privateKeyToAccount(chain.payerPrivateKey) });
  client.setSpendControls({ allowedAssets: [{ network: "eip155:84532", asset: chain.usdcAddress, maxAmountPerPayment: "100000" }] });
  const pay = wrapFetchWithPayment(fetch, client);
  const t = Date.now();
  const r = await pay(`http://127.0.0.1:${port}/res`);
  console.log(r.status, await r.text(), Date.now() - t, "ms", r.headers.get("payment-response")?.slice(0, 40));
  server.close();
} finally { await chain.stop(); }
