/**
 * What the public subscription listing may show of a target (issue 19, major 4): enough for the owner to tell
 * their subscriptions apart, never enough to use or find them. A webhook keeps its scheme and host (the path
 * and query are, for Slack or Discord, the credential); an email its first letter and domain; a Telegram chat id
 * its last two digits; a push subscription its endpoint's origin. `scrubTarget` removes every revealing part of a
 * target from another text (the last delivery error may quote it).
 *
 * @example
 *   maskTarget('webhook', 'https://hooks.slack.com/services/T0/B0/xyz'); // 'https://hooks.slack.com/***'
 *   maskTarget('email', 'jane@x.org');                                  // 'j***@x.org'
 *   maskTarget('telegram', '-1001234567890');                           // '***90'
 *   scrubTarget('email', 'jane@x.org', 'SMTP 550: <jane@x.org> unknown'); // 'SMTP 550: <***> unknown'
 */
import type { ChannelName } from '../../notify/channels/channel.js';

const MASK = '***';

function parsedUrl(text: string): URL | null {
  try {
    return new URL(text);
  } catch {
    return null;
  }
}

function pushSubscription(target: string): { endpoint: string | null; keys: string[] } {
  try {
    const value = JSON.parse(target) as { endpoint?: unknown; keys?: Record<string, unknown> };
    const endpoint = typeof value?.endpoint === 'string' ? value.endpoint : null;
    const keys = value?.keys && typeof value.keys === 'object' ? Object.values(value.keys).filter((k): k is string => typeof k === 'string') : [];
    return { endpoint, keys };
  } catch {
    return { endpoint: null, keys: [] };
  }
}

function originOnly(text: string | null): string {
  const url = text === null ? null : parsedUrl(text);
  return url && (url.protocol === 'https:' || url.protocol === 'http:') ? `${url.protocol}//${url.host}/${MASK}` : MASK;
}

/** The target as the public listing shows it. */
export function maskTarget(channel: ChannelName, target: string): string {
  switch (channel) {
    case 'webhook':
      return originOnly(target);
    case 'webpush':
      return originOnly(pushSubscription(target).endpoint);
    case 'email': {
      const at = target.lastIndexOf('@');
      return at < 1 ? MASK : `${target[0]}${MASK}${target.slice(at)}`;
    }
    case 'telegram':
      return target.length >= 6 ? `${MASK}${target.slice(-2)}` : MASK;
  }
}

/** The parts of a target that must not appear anywhere in the listing, longest first. */
function secretParts(channel: ChannelName, target: string): string[] {
  const parts = [target];
  if (channel === 'webhook' || channel === 'webpush') {
    const push = channel === 'webpush' ? pushSubscription(target) : null;
    const url = parsedUrl(push ? (push.endpoint ?? '') : target);
    if (push) parts.push(...push.keys, ...(push.endpoint ? [push.endpoint] : []));
    if (url) {
      const rest = `${url.pathname}${url.search}${url.hash}`;
      if (rest !== '/' && rest !== '') parts.push(rest, decodeURIComponentSafe(rest));
      for (const segment of url.pathname.split('/')) if (segment.length >= 4) parts.push(segment);
      for (const value of url.searchParams.values()) if (value.length >= 4) parts.push(value);
    }
  } else if (channel === 'email') {
    const at = target.lastIndexOf('@');
    if (at >= 3) parts.push(target.slice(0, at));
  }
  return [...new Set(parts.filter((p) => p.length > 0))].sort((a, b) => b.length - a.length);
}

function decodeURIComponentSafe(text: string): string {
  try {
    return decodeURIComponent(text);
  } catch {
    return text;
  }
}

/** `text` with every revealing part of the target replaced by `***` (in any letter case). */
export function scrubTarget(channel: ChannelName, target: string, text: string): string {
  const escaped = secretParts(channel, target).map((p) => p.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'));
  return text.replace(new RegExp(escaped.join('|'), 'gi'), MASK);
}
