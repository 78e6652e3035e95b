// The live exchange dashboard: preact + htm, no build step. Every endpoint it polls answers 200 before data
// exists (the /dashboard/api reads), so a fresh node shows no console error.
import { h, render } from 'preact';
import { useEffect, useRef, useState } from 'preact/hooks';
import htm from 'htm';
import { formatUnits, shortHex, tokenLabel, usd, when } from './format.js';

const html = htm.bind(h);
const NATIVE = '0xeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeee';

async function getJson(url, init) {
  const res = await fetch(url, init);
  const body = await res.json().catch(() => null);
  if (!res.ok) throw new Error(body?.message ?? body?.description ?? `${res.status} ${res.statusText}`);
  return body;
}

/** Fetches `url` (again whenever `key` changes, and every `everyMs` if given); null while loading. */
function useJson(url, key, everyMs) {
  const [state, setState] = useState({ data: null, error: null });
  useEffect(() => {
    if (!url) return undefined;
    let live = true;
    let timer = null;
    const load = async () => {
      try {
        const data = await getJson(url);
        if (live) setState({ data, error: null });
      } catch (err) {
        if (live) setState((s) => ({ data: s.data, error: err.message }));
      }
      if (live && everyMs) timer = setTimeout(load, everyMs);
    };
    load();
    return () => {
      live = false;
      clearTimeout(timer);
    };
  }, [url, key]);
  return state;
}

function parseRoute() {
  const parts = location.hash.replace(/^#\/?/, '').split('/');
  if (parts[0] === 'address' && /^0x[0-9a-fA-F]{40}$/.test(parts[1] ?? '')) return { view: 'address', address: parts[1].toLowerCase() };
  if (parts[0] === 'order' && /^0x[0-9a-fA-F]{112}$/.test(parts[1] ?? '')) return { view: 'order', uid: parts[1].toLowerCase() };
  if (parts[0] === 'market') return { view: 'market' };
  return { view: 'exchange' };
}

const Address = ({ value }) => (value ? html`<a class="mono" href=${`#/address/${value.toLowerCase()}`} title=${value}>${shortHex(value)}</a>` : html`<span class="muted">—</span>`);
const OrderLink = ({ uid }) => html`<a class="mono" href=${`#/order/${uid}`} title=${uid}>${shortHex(uid, 8)}</a>`;
const Status = ({ value }) => html`<span class=${`status ${value}`} data-testid="status">${value}</span>`;
const Amount = ({ tokens, token, atoms }) => html`<span title=${`${atoms} atoms`}>${formatUnits(atoms, tokens[token?.toLowerCase()]?.decimals)} ${tokenLabel(tokens, token)}</span>`;
const Card = ({ title, note, cls, children, testid }) => html`<section class=${`card ${cls ?? ''}`} data-testid=${testid}><h2>${title} <small>${note}</small></h2>${children}</section>`;
const Failure = ({ error }) => (error ? html`<p class="error">${error}</p>` : null);

function DevnetFacts({ devnet }) {
  const addToWallet = async () => {
    await window.ethereum.request({
      method: 'wallet_addEthereumChain',
      params: [{ chainId: `0x${devnet.chainId.toString(16)}`, chainName: 'batchbook devnet', rpcUrls: [devnet.rpcUrl], nativeCurrency: { name: 'Ether', symbol: 'ETH', decimals: 18 } }],
    });
  };
  return html`<${Card} title="Devnet" note=${`a block every ${devnet.blockTime} s`} testid="devnet-facts">
    <dl class="facts">
      <dt>RPC URL</dt><dd><code data-testid="rpc-url">${devnet.rpcUrl}</code></dd>
      <dt>Chain id</dt><dd data-testid="chain-id">${devnet.chainId}</dd>
      ${Object.entries(devnet.contracts).map(([name, address]) => html`<dt>${name}</dt><dd><${Address} value=${address} /></dd>`)}
      <dt>Tokens</dt><dd>${devnet.tokens.map((t) => html`<span title=${t.address}>${t.symbol} (${t.decimals}) </span>`)}</dd>
      <dt>Demo accounts</dt><dd>${devnet.accounts.map((a) => html`<div><${Address} value=${a.address} /> <span class="muted">${a.role}</span></div>`)}</dd>
    </dl>
    <p>${window.ethereum ? html`<button class="secondary" onClick=${addToWallet}>Add the devnet to your wallet</button>` : html`<span class="muted">No injected wallet found (install one to add the devnet with one click).</span>`}</p>
  </${Card}>`;
}

function AuctionCard({ overview, tokens }) {
  const auction = overview?.auction;
  return html`<${Card} title="Current batch auction" note=${overview?.headBlock != null ? `head block ${overview.headBlock}` : ''} testid="auction">
    ${auction
      ? html`<div class="big">#<span data-testid="auction-id">${auction.id}</span></div>
          <p>block ${auction.block} · <strong>${auction.orderCount}</strong> orders</p>
          ${auction.orders.length > 0 && html`<p>${auction.orders.map((uid) => html`<${OrderLink} uid=${uid} /> `)}</p>`}
          ${Object.keys(auction.prices).length > 0 && html`<table><tr><th>token</th><th class="num">native price (wei per atom × 1e18)</th></tr>
            ${Object.entries(auction.prices).map(([token, price]) => html`<tr><td>${tokenLabel(tokens, token)}</td><td class="num mono">${price}</td></tr>`)}
          </table>`}`
      : html`<p class="muted">No auction yet: the first is built at the next block.</p>`}
  </${Card}>`;
}

function Competitions({ network, tick }) {
  const { data, error } = useJson(`/dashboard/api/${network.name}/competitions?limit=10`, tick);
  return html`<${Card} title="Recent auctions" note="solver competition" cls="wide" testid="competitions">
    <${Failure} error=${error} />
    ${data && data.length === 0 && html`<p class="muted">No auction has received a solution yet.</p>`}
    ${data && data.length > 0 && html`<table>
      <tr><th>auction</th><th>orders</th><th>solvers (score)</th><th>settlement</th></tr>
      ${data.map((c) => html`<tr>
        <td>#${c.auctionId} <span class="muted">blk ${c.startBlock}</span></td>
        <td class="num">${c.orderCount}</td>
        <td>${c.solutions.map((s) => html`<div class=${s.isWinner ? 'winner' : s.filteredOut ? 'muted' : ''}>${s.isWinner ? '★ ' : ''}${s.solver} <span class="mono">${s.score}</span></div>`)}</td>
        <td>${c.transactionHashes.map((tx) => html`<div class="mono" title=${tx}>${shortHex(tx, 10)}</div>`)}</td>
      </tr>`)}
    </table>`}
  </${Card}>`;
}

/** Who an order belongs to: its owner, or for an eth-flow order the user who placed it (the owner is the contract). */
const userOf = (o) => o.onchainOrderData?.sender ?? o.owner;

function OrdersTable({ orders, tokens }) {
  if (!orders) return null;
  if (orders.length === 0) return html`<p class="muted">No orders yet.</p>`;
  return html`<table>
    <tr><th>order</th><th>owner</th><th>kind</th><th class="num">sell</th><th class="num">buy (limit)</th><th>status</th></tr>
    ${orders.map((o) => html`<tr>
      <td><${OrderLink} uid=${o.uid} /></td><td><${Address} value=${userOf(o)} /></td><td>${o.kind}</td>
      <td class="num"><${Amount} tokens=${tokens} token=${o.sellToken} atoms=${o.sellAmount} /></td>
      <td class="num"><${Amount} tokens=${tokens} token=${o.buyToken} atoms=${o.buyAmount} /></td>
      <td><${Status} value=${o.status} /></td>
    </tr>`)}
  </table>`;
}

function LatestOrders({ network, tick, tokens }) {
  const { data, error } = useJson(`/dashboard/api/${network.name}/orders?limit=15`, tick);
  return html`<${Card} title="Latest orders" cls="wide" testid="orders"><${Failure} error=${error} /><${OrdersTable} orders=${data} tokens=${tokens} /></${Card}>`;
}

function TradesTable({ trades, tokens }) {
  if (!trades) return null;
  if (trades.length === 0) return html`<p class="muted">No trades yet.</p>`;
  return html`<table>
    <tr><th>block</th><th>order</th><th>trader</th><th class="num">sold</th><th class="num">bought</th><th class="num">surplus</th><th>tx</th></tr>
    ${trades.map((t) => html`<tr>
      <td>${t.blockNumber}</td><td><${OrderLink} uid=${t.orderUid} /></td><td><${Address} value=${t.trader ?? t.owner} /></td>
      <td class="num"><${Amount} tokens=${tokens} token=${t.sellToken} atoms=${t.sellAmount} /></td>
      <td class="num"><${Amount} tokens=${tokens} token=${t.buyToken} atoms=${t.buyAmount} /></td>
      <td class="num">${t.surplus === undefined ? '—' : html`<${Amount} tokens=${tokens} token=${t.surplusToken} atoms=${t.surplus} />`}</td>
      <td class="mono" title=${t.txHash}>${shortHex(t.txHash ?? '', 8)}</td>
    </tr>`)}
  </table>`;
}

function LatestTrades({ network, tick, tokens }) {
  const { data, error } = useJson(`/dashboard/api/${network.name}/trades?limit=15`, tick);
  return html`<${Card} title="Latest trades" note="executed amounts and surplus over the limit price" cls="wide" testid="trades"><${Failure} error=${error} /><${TradesTable} trades=${data} tokens=${tokens} /></${Card}>`;
}

/** Trade a CoW: two demo traders place opposite orders; follows them until both are fulfilled. */
function CowPanel({ network, tick, tokens }) {
  const [placed, setPlaced] = useState(null);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState(null);
  const [progress, setProgress] = useState(null);
  const press = async () => {
    setBusy(true);
    setError(null);
    setProgress(null);
    try {
      setPlaced((await getJson(`/dashboard/api/${network.name}/trade-a-cow`, { method: 'POST' })).orders);
    } catch (err) {
      setError(err.message);
    }
    setBusy(false);
  };
  const settled = progress?.length === 2 && progress.every((p) => p.order.status === 'fulfilled' && p.lifecycle.competition?.winner);
  useEffect(() => {
    if (!placed || settled) return undefined;
    let live = true;
    Promise.all(
      placed.map(async (o) => {
        const [order, lifecycle] = await Promise.all([getJson(`/${network.name}/api/v1/orders/${o.uid}`), getJson(`/dashboard/api/${network.name}/orders/${o.uid}/lifecycle`)]);
        return { order, lifecycle };
      }),
    ).then((rows) => live && setProgress(rows), (err) => live && setError(err.message));
    return () => {
      live = false;
    };
  }, [placed, tick]);
  const tx = progress?.map((p) => p.lifecycle.trades[0]?.txHash).find(Boolean);
  const competition = progress?.map((p) => p.lifecycle.competition).find((c) => c && c.transactionHashes.includes(tx)) ?? progress?.[0]?.lifecycle.competition;
  return html`<${Card} title="Trade a CoW" note="devnet only" cls="cow" testid="cow">
    <p>The two demo traders place opposite orders (WETH ⇄ USD), signed on the server with the devnet's keys. Watch the next auctions match and settle them.</p>
    <button onClick=${press} disabled=${busy} data-testid="trade-a-cow">${busy ? 'Placing…' : 'Trade a CoW'}</button>
    <${Failure} error=${error} />
    ${placed && html`<table>
      <tr><th>order</th><th>owner</th><th class="num">sell</th><th class="num">buy (limit)</th><th>status</th></tr>
      ${placed.map((o, i) => html`<tr data-testid="cow-order">
        <td><${OrderLink} uid=${o.uid} /></td><td><${Address} value=${o.owner} /></td>
        <td class="num"><${Amount} tokens=${tokens} token=${o.sellToken} atoms=${o.sellAmount} /></td>
        <td class="num"><${Amount} tokens=${tokens} token=${o.buyToken} atoms=${o.buyAmount} /></td>
        <td>${progress ? html`<${Status} value=${progress[i].order.status} />` : '…'}</td>
      </tr>`)}
    </table>`}
    ${tx && html`<dl class="facts">
      <dt>Settlement tx</dt><dd class="mono" data-testid="cow-tx">${tx}</dd>
      <dt>Auction</dt><dd>${competition ? `#${competition.auctionId}` : '…'}</dd>
      <dt>Winning solver</dt><dd class="winner" data-testid="cow-solver">${competition?.winner ?? '…'}</dd>
    </dl>`}
  </${Card}>`;
}

function ExchangeView({ network, devnet, overview, tokens }) {
  const tick = overview ? `${overview.headBlock}:${overview.auction?.id}` : 'none';
  return html`<div class="grid">
    ${devnet && html`<${CowPanel} network=${network} tick=${tick} tokens=${tokens} />`}
    <${AuctionCard} overview=${overview} tokens=${tokens} />
    <${Competitions} network=${network} tick=${tick} />
    <${LatestOrders} network=${network} tick=${tick} tokens=${tokens} />
    <${LatestTrades} network=${network} tick=${tick} tokens=${tokens} />
    ${devnet && html`<${DevnetFacts} devnet=${devnet} />`}
  </div>`;
}

let uplotLoading = null;
function loadUplot() {
  uplotLoading ??= new Promise((resolve, reject) => {
    const css = Object.assign(document.createElement('link'), { rel: 'stylesheet', href: '/dashboard/vendor/uplot.css' });
    const script = Object.assign(document.createElement('script'), { src: '/dashboard/vendor/uplot.js', onload: () => resolve(window.uPlot), onerror: reject });
    document.head.append(css, script);
  });
  return uplotLoading;
}

/** The pool's pair as base/quote with the pricier token as base (WETH in USDC rather than USDC in WETH). */
function orientPair(pool, marketTokens) {
  const price = (t) => marketTokens.find((m) => m.address === t)?.usdPrice ?? 0;
  return price(pool.token0) >= price(pool.token1) ? { base: pool.token0, quote: pool.token1 } : { base: pool.token1, quote: pool.token0 };
}

function PriceChart({ network, pair, tokens }) {
  const box = useRef(null);
  const url = pair.base && pair.quote ? `/dashboard/api/${network.name}/markets/${pair.base}-${pair.quote}/history` : null;
  const { data } = useJson(url, url);
  useEffect(() => {
    if (!data || data.points.length < 2 || !box.current) return undefined;
    let chart = null;
    loadUplot().then((uPlot) => {
      const series = [data.points.map((p) => p.t / 1000), data.points.map((p) => p.price)];
      chart = new uPlot({ width: box.current.clientWidth || 400, height: 160, legend: { show: false }, series: [{}, { stroke: '#1d5fa8', width: 1.5, points: { show: false } }], axes: [{}, { size: 70 }] }, series, box.current);
    });
    return () => chart?.destroy();
  }, [data]);
  const label = `${tokenLabel(tokens, pair.base)} in ${tokenLabel(tokens, pair.quote)}`;
  return html`<div><strong>${label}</strong> <span class="muted">24 h</span>
    ${data && data.points.length < 2 ? html`<p class="muted">No indexed history for this pair yet.</p>` : html`<div class="chart" ref=${box}></div>`}</div>`;
}

function MarketView({ network, tokens }) {
  const { data, error } = useJson(`/dashboard/api/${network.name}/market`, network.name, 30_000);
  return html`<div class="grid">
    <${Card} title="USD prices" testid="usd-prices"><${Failure} error=${error} />
      ${data && html`<table><tr><th>token</th><th class="num">USD</th><th>address</th></tr>
        ${data.tokens.map((t) => html`<tr><td>${t.symbol}</td><td class="num">${usd(t.usdPrice)}</td><td><${Address} value=${t.address} /></td></tr>`)}</table>`}
    </${Card}>
    <${Card} title="Pools" note="TVL, 24 h volume, APR, recommended slippage" cls="wide2" testid="pools">
      ${data && html`<table><tr><th>pool</th><th>pair</th><th class="num">TVL</th><th class="num">volume 24 h</th><th class="num">APR</th><th class="num">slippage</th></tr>
        ${data.pools.map((p) => html`<tr><td class="mono" title=${p.address}>${shortHex(p.address)}</td><td>${tokenLabel(tokens, p.token0)}/${tokenLabel(tokens, p.token1)}</td>
          <td class="num">${usd(p.tvl)}</td><td class="num">${usd(p.volume)}</td><td class="num">${p.apr == null ? '—' : `${p.apr.toFixed(2)} %`}</td>
          <td class="num">${p.slippageBps == null ? '—' : `${(p.slippageBps / 100).toFixed(2)} %`}</td></tr>`)}</table>`}
    </${Card}>
    <${Card} title="Price history" note="24 h, from the indexed pool history" cls="wide" testid="charts">
      <div class="charts">${data && data.pools.map((p) => html`<${PriceChart} key=${p.address} network=${network} pair=${orientPair(p, data.tokens)} tokens=${tokens} />`)}</div>
    </${Card}>
  </div>`;
}

/** Balances and vault-relayer allowances over the balances SSE stream. */
function LiveBalances({ network, address, tokens }) {
  const [entries, setEntries] = useState(null);
  const [state, setState] = useState('connecting');
  const list = [NATIVE, ...Object.keys(tokens).filter((t) => t !== NATIVE)].join(',');
  useEffect(() => {
    const source = new EventSource(`/${network.chainId}/accounts/${address}/balances/sse?tokens=${list}`);
    source.addEventListener('message', (e) => {
      setEntries(JSON.parse(e.data));
      setState('live');
    });
    source.onerror = () => setState('reconnecting');
    return () => source.close();
  }, [network.chainId, address, list]);
  return html`<${Card} title="Balances" note=${`streamed live (${state})`} testid="balances">
    ${entries && html`<table><tr><th>token</th><th class="num">balance</th><th class="num">allowance to the vault relayer</th></tr>
      ${entries.map((e) => html`<tr data-testid=${`balance-${e.token.symbol}`}><td>${e.token.symbol}</td>
        <td class="num" data-testid="balance">${formatUnits(e.balance, e.token.decimals)}</td>
        <td class="num">${BigInt(e.allowance) >= 2n ** 255n ? 'unlimited' : formatUnits(e.allowance, e.token.decimals)}</td></tr>`)}</table>`}
  </${Card}>`;
}

function AddressView({ network, address, tokens, tick }) {
  const orders = useJson(`/${network.name}/api/v1/account/${address}/orders?limit=20`, tick);
  const notifications = useJson(`/dashboard/api/${network.name}/accounts/${address}/notifications`, address);
  const partnerFees = useJson(`/${network.chainId}/accounts/${address}/partnerFees`, tick);
  return html`<div><h2 class="mono" data-testid="address">${address}</h2><div class="grid">
    <${LiveBalances} network=${network} address=${address} tokens=${tokens} />
    <${Card} title="Orders" testid="address-orders"><${Failure} error=${orders.error} /><${OrdersTable} orders=${orders.data} tokens=${tokens} /></${Card}>
    <${Card} title="Partner fees accrued" note="app-data partner fees paid to this address" testid="partner-fees"><${Failure} error=${partnerFees.error} />
      ${partnerFees.data && (partnerFees.data.totals.length === 0 ? html`<p class="muted">none</p>` : html`<table><tr><th>token</th><th class="num">total</th></tr>
        ${partnerFees.data.totals.map((t) => html`<tr><td>${tokens[t.token]?.symbol ?? shortHex(t.token, 6)}</td><td class="num"><${Amount} tokens=${tokens} token=${t.token} atoms=${t.amount} /></td></tr>`)}</table>
        <p class="muted">${partnerFees.data.fees.length} fee${partnerFees.data.fees.length === 1 ? '' : 's'}, latest in block ${partnerFees.data.fees[0]?.blockNumber}</p>`)}
    </${Card}>
    ${notifications.data?.available && html`<${Card} title="Notifications" testid="notifications">
      ${(Array.isArray(notifications.data.notifications) ? notifications.data.notifications : [notifications.data.notifications]).map((n) => html`<pre class="mono">${JSON.stringify(n, null, 1)}</pre>`)}
    </${Card}>`}
  </div></div>`;
}

function OrderView({ network, uid, tokens, tick }) {
  const order = useJson(`/${network.name}/api/v1/orders/${uid}`, tick);
  const lifecycle = useJson(`/dashboard/api/${network.name}/orders/${uid}/lifecycle`, tick);
  const o = order.data;
  return html`<div><h2 class="mono">order ${shortHex(uid, 12)}</h2><div class="grid">
    <${Card} title="Order" testid="order"><${Failure} error=${order.error} />
      ${o && html`<dl class="facts">
        <dt>status</dt><dd><${Status} value=${o.status} /></dd><dt>owner</dt><dd><${Address} value=${userOf(o)} />${o.onchainOrderData ? html` <span class="muted">(eth-flow, via <${Address} value=${o.owner} />)</span>` : ''}</dd>
        <dt>kind</dt><dd>${o.kind}${o.partiallyFillable ? ' (partially fillable)' : ''}, ${o.class}</dd>
        <dt>sell</dt><dd><${Amount} tokens=${tokens} token=${o.sellToken} atoms=${o.sellAmount} /></dd>
        <dt>buy (limit)</dt><dd><${Amount} tokens=${tokens} token=${o.buyToken} atoms=${o.buyAmount} /></dd>
        <dt>executed</dt><dd><${Amount} tokens=${tokens} token=${o.sellToken} atoms=${o.executedSellAmount} /> → <${Amount} tokens=${tokens} token=${o.buyToken} atoms=${o.executedBuyAmount} /></dd>
        <dt>fees</dt><dd data-testid="order-fees"><${Amount} tokens=${tokens} token=${o.executedFeeToken ?? o.sellToken} atoms=${o.executedFee ?? '0'} /> <span class="muted">(network, protocol and partner fees)</span></dd>
        <dt>created</dt><dd>${when(o.creationDate)}</dd><dt>valid to</dt><dd>${when(o.validTo * 1000)}</dd>
        <dt>uid</dt><dd class="mono">${o.uid}</dd></dl>`}
    </${Card}>
    <${Card} title="Lifecycle" note="events with reasons" testid="lifecycle"><${Failure} error=${lifecycle.error} />
      ${lifecycle.data && html`<table><tr><th>time</th><th>event</th><th>reason</th></tr>
        ${lifecycle.data.events.map((e) => html`<tr><td>${when(e.timestamp)}</td><td><${Status} value=${e.label} /></td><td>${e.reason ?? ''}</td></tr>`)}</table>
        ${lifecycle.data.competition && html`<p>Latest competition: auction #${lifecycle.data.competition.auctionId}, winner <span class="winner">${lifecycle.data.competition.winner ?? 'none'}</span></p>`}`}
    </${Card}>
    <${Card} title="Trades" testid="order-trades">${lifecycle.data && html`<${TradesTable} trades=${lifecycle.data.trades} tokens=${tokens} />`}</${Card}>
  </div></div>`;
}

function App() {
  const [route, setRoute] = useState(parseRoute());
  const networks = useJson('/dashboard/api/networks', 'once');
  const [picked, setPicked] = useState(null);
  useEffect(() => {
    const onHash = () => setRoute(parseRoute());
    addEventListener('hashchange', onHash);
    return () => removeEventListener('hashchange', onHash);
  }, []);
  const list = networks.data ?? [];
  const network = list.find((n) => n.name === picked) ?? list.find((n) => n.isDefault) ?? list[0];
  const devnet = useJson(network?.devnet ? '/devnet' : null, network?.name);
  const pollMs = Math.max(500, ((network?.blockTime ?? 2) * 1000) / 2);
  const overview = useJson(network ? `/dashboard/api/${network.name}/overview` : null, network?.name, pollMs);
  const market = useJson(network && !network.devnet ? `/dashboard/api/${network.name}/market` : null, network?.name);
  const tokens = {};
  for (const t of (network?.devnet ? devnet.data?.tokens : market.data?.tokens) ?? []) tokens[t.address.toLowerCase()] = { symbol: t.symbol, decimals: t.decimals };
  tokens[NATIVE] = { symbol: 'ETH', decimals: 18 };
  if (!network) return html`<p class="muted">${networks.error ?? 'Loading…'}</p>`;
  const tick = overview.data ? `${overview.data.headBlock}` : 'none';
  const devnetData = network.devnet && devnet.data?.chainId === network.chainId ? devnet.data : null;
  const tab = (view, href, label) => html`<a href=${href} class=${route.view === view ? 'on' : ''}>${label}</a>`;
  return html`<div>
    <div class="bar">
      <label>Network <select data-testid="network" value=${network.name} onChange=${(e) => setPicked(e.currentTarget.value)}>
        ${list.map((n) => html`<option value=${n.name}>${n.name} (${n.chainId})</option>`)}
      </select></label>
      <span class="tabs">${tab('exchange', '#/', 'Exchange')} ${tab('market', '#/market', 'Market')}</span>
      <span class="muted">${overview.data?.headBlock != null ? `block ${overview.data.headBlock}` : ''}</span>
      <${Failure} error=${overview.error} />
    </div>
    ${route.view === 'exchange' && html`<${ExchangeView} network=${network} devnet=${devnetData} overview=${overview.data} tokens=${tokens} />`}
    ${route.view === 'market' && html`<${MarketView} network=${network} tokens=${tokens} />`}
    ${route.view === 'address' && html`<${AddressView} network=${network} address=${route.address} tokens=${tokens} tick=${tick} />`}
    ${route.view === 'order' && html`<${OrderView} network=${network} uid=${route.uid} tokens=${tokens} tick=${tick} />`}
  </div>`;
}

const root = document.getElementById('app');
root.textContent = '';
render(html`<${App} />`, root);
