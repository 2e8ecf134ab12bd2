export { CHROMIUM_PATH, launchChromium as launchBrowser } from '../../scripts/chromium.js';
