import { ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { freePort } from 'test/support/free-port';
import { Abi, createPublicClient, createWalletClient, defineChain, Hex, http, PublicClient, WalletClient } from 'viem';

// solc-js ships the compiler itself: nothing is downloaded at test time.
// eslint-disable-next-line @typescript-eslint/no-require-imports
const solc = require('solc') as { compile(input: string): string };

const HARDHAT_DIR = join(__dirname, 'hardhat');
/** Hardhat's first funded account, which its node signs for. */
const DEPLOYER: Hex = '0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266';
const hardhat = defineChain({
  id: 31337,
  name: 'hardhat',
  nativeCurrency: { name: 'Ether', symbol: 'ETH', decimals: 18 },
  rpcUrls: { default: { http: [] } },
});

export interface LocalEvm {
  url: string;
  client: PublicClient;
  wallet: WalletClient;
  /** Mines `blocks` empty blocks. */
  mine(blocks: number): Promise<void>;
  snapshot(): Promise<Hex>;
  revert(id: Hex): Promise<void>;
  /** Deploys a 6-decimal token holding 1e12 units; resolves to its address. */
  deployToken(): Promise<Hex>;
  /** Sends `amount` units of `token` to `to`; resolves to the transaction's block. */
  transfer(token: Hex, to: string, amount: bigint): Promise<bigint>;
  stop(): Promise<void>;
}

let compiled: { abi: Abi; bytecode: Hex } | null = null;

function compileToken(): { abi: Abi; bytecode: Hex } {
  if (!compiled) {
    const input = {
      language: 'Solidity',
      sources: { 'TestUsdt.sol': { content: readFileSync(join(HARDHAT_DIR, 'TestUsdt.sol'), 'utf8') } },
      settings: { outputSelection: { '*': { '*': ['abi', 'evm.bytecode.object'] } } },
    };
    const output = JSON.parse(solc.compile(JSON.stringify(input))) as {
      errors?: { severity: string; message: string }[];
      contracts: Record<string, Record<string, { abi: Abi; evm: { bytecode: { object: string } } }>>;
    };
    const errors = (output.errors ?? []).filter((error) => error.severity === 'error');
    if (errors.length > 0) {
      throw new Error(errors.map((error) => error.message).join('\n'));
    }
    const contract = output.contracts['TestUsdt.sol'].TestUsdt;
    compiled = { abi: contract.abi, bytecode: `0x${contract.evm.bytecode.object}` };
  }
  return compiled;
}

/** `hardhat node` on a free port, in its own process (stopped by its PID), with automining. */
export async function startLocalEvm(): Promise<LocalEvm> {
  const port = await freePort();
  const child: ChildProcess = spawn(
    process.execPath,
    [require.resolve('hardhat/internal/cli/cli.js'), 'node', '--hostname', '127.0.0.1', '--port', String(port)],
    {
      cwd: HARDHAT_DIR,
      env: { ...process.env, HARDHAT_DISABLE_TELEMETRY_PROMPT: 'true' },
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  let output = '';
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`hardhat node did not start:\n${output}`)), 30_000);
    child.stdout!.on('data', (chunk: Buffer) => {
      output += chunk.toString();
      if (output.includes('Started HTTP')) {
        clearTimeout(timer);
        resolve();
      }
    });
    child.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.once('exit', (code) => reject(new Error(`hardhat node exited with ${code}:\n${output}`)));
  });
  const url = `http://127.0.0.1:${port}`;
  const client = createPublicClient({ chain: hardhat, transport: http(url) });
  const wallet = createWalletClient({ account: DEPLOYER, chain: hardhat, transport: http(url) });
  // Hardhat's own methods (mining, snapshots) are outside viem's typed schema.
  const rpc = (method: string, params: unknown[]): Promise<unknown> =>
    client.request<{ Method: string; Parameters: unknown[]; ReturnType: unknown }>({ method, params });
  return {
    url,
    client,
    wallet,
    mine: async (blocks) => void (await rpc('hardhat_mine', [`0x${blocks.toString(16)}`])),
    snapshot: async () => (await rpc('evm_snapshot', [])) as Hex,
    revert: async (id) => void (await rpc('evm_revert', [id])),
    deployToken: async () => {
      const { abi, bytecode } = compileToken();
      const hash = await wallet.deployContract({
        abi,
        bytecode,
        args: [10n ** 12n],
        account: wallet.account,
        chain: hardhat,
      });
      return (await client.waitForTransactionReceipt({ hash })).contractAddress!;
    },
    transfer: async (token, to, amount) => {
      const hash = await wallet.writeContract({
        address: token,
        abi: compileToken().abi,
        functionName: 'transfer',
        args: [to, amount],
        account: wallet.account,
        chain: hardhat,
      });
      return (await client.waitForTransactionReceipt({ hash })).blockNumber;
    },
    stop: async () => {
      if (child.exitCode === null && child.signalCode === null) {
        const exited = once(child, 'exit');
        process.kill(child.pid!, 'SIGTERM');
        await exited;
      }
    },
  };
}
