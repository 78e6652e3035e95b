import { benchNotifications } from './notifications.js';
const r = await benchNotifications();
console.log(r[1]);
