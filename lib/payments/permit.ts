// EIP-2612's Permit as EIP-712 typed data: what a payer signs to grant auto-topup's top-up address
// an allowance (lib/payments/auto-topup.ts checks it; dev/pay-cli.ts and the tests sign it). Apart
// from the code that submits it, so that a signer need not read the service's configuration.

export const PERMIT_TYPES = {
  Permit: [
    { name: "owner", type: "address" },
    { name: "spender", type: "address" },
    { name: "value", type: "uint256" },
    { name: "nonce", type: "uint256" },
    { name: "deadline", type: "uint256" },
  ],
} as const;

/** The ABI of the token's `nonces(owner)`: the permit's nonce. */
export const NONCES_ABI = [
  { type: "function", name: "nonces", stateMutability: "view", inputs: [{ name: "owner", type: "address" }], outputs: [{ type: "uint256" }] },
] as const;

// The other proof a payer may give (docs/api.md, "Auto-topup"), when its allowance already exists:
// an EIP-712 message signed by the payer naming the account that may pull from it, the top-up
// address, and a deadline. It names the account, so no other account can use it.

/** The EIP-712 domain of an auto-topup authorisation on the chain `chainId`. */
export const authorizationDomain = (chainId: number) => ({ name: "Shotline auto-topup", version: "1", chainId }) as const;

export const AUTHORIZATION_TYPES = {
  AutoTopupAuthorization: [
    { name: "account", type: "string" },
    { name: "payer", type: "address" },
    { name: "spender", type: "address" },
    { name: "deadline", type: "uint256" },
  ],
} as const;
