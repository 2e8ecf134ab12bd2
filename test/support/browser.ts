export { CHROMIUM_PATH, launchChromium as launchBrowser, logInToDashboard } from '../../scripts/chromium.js';
