export { launchChromium as launchBrowser, logInToDashboard } from '../../scripts/chromium.js';
