/**
 * The short human title of a notification type, for channels that show one (Telegram's bold first line, an
 * email's subject). Unknown types fall back to their words.
 *
 * @example
 *   notificationTitle('order_partially_filled'); // 'Order partially filled'
 */
const TITLES: Record<string, string> = {
  order_filled: 'Order filled',
  order_partially_filled: 'Order partially filled',
  order_expired: 'Order expired',
  order_cancelled: 'Order cancelled',
  insufficient_balance: 'Insufficient balance',
  price_improvement: 'Price improvement',
};

export function notificationTitle(type: string): string {
  return TITLES[type] ?? type.replace(/_/g, ' ');
}
