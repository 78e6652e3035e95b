/**
 * The dashboard's essentials as plain HTML, rendered by the server into index.html's `<noscript>`: what a reader
 * without JavaScript (or a text browser) still gets — the networks, the devnet's facts and the current auction.
 */
import type { DevnetDescription } from '../chain/devnet/index.js';

export interface SummaryNetwork {
  name: string;
  chainId: number;
  devnet: DevnetDescription | null;
  auction: { id: number; block: number; orderCount: number } | null;
}

const ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };
export const escapeHtml = (text: string): string => text.replace(/[&<>"']/g, (c) => ESCAPES[c]!);

function devnetFacts(d: DevnetDescription): string {
  const contracts = Object.entries(d.contracts).map(([name, address]) => `<li>${escapeHtml(name)}: <code>${escapeHtml(address)}</code></li>`);
  const tokens = d.tokens.map((t) => `<li>${escapeHtml(t.symbol)} (${t.decimals} decimals): <code>${escapeHtml(t.address)}</code></li>`);
  const accounts = d.accounts.map((a) => `<li>${escapeHtml(a.role)}: <code>${escapeHtml(a.address)}</code></li>`);
  return [
    `<p>RPC <code>${escapeHtml(d.rpcUrl)}</code>, chain id ${d.chainId}, a block every ${d.blockTime} s.</p>`,
    `<h3>Contracts</h3><ul>${contracts.join('')}</ul>`,
    `<h3>Tokens</h3><ul>${tokens.join('')}</ul>`,
    `<h3>Demo accounts</h3><ul>${accounts.join('')}</ul>`,
  ].join('\n');
}

export function renderServerSummary(networks: SummaryNetwork[]): string {
  const sections = networks.map((n) => {
    const auction = n.auction ? `<p>Current batch auction: <strong>${n.auction.id}</strong> at block ${n.auction.block}, ${n.auction.orderCount} orders.</p>` : '<p>No batch auction yet.</p>';
    return [
      `<section><h2>${escapeHtml(n.name)} (chain ${n.chainId})</h2>`,
      auction,
      n.devnet ? devnetFacts(n.devnet) : '',
      `<p>Order book: <a href="/${escapeHtml(n.name)}/api/v1/auction">/${escapeHtml(n.name)}/api/v1</a></p></section>`,
    ].join('\n');
  });
  return [
    '<p>This page shows the exchange live with JavaScript; without it, here are the essentials (reload for fresh figures).',
    'The API explorer is at <a href="/docs">/docs</a>.</p>',
    ...sections,
  ].join('\n');
}
