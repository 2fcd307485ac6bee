// capture-website (a dev dependency, for `npm run bench` only) depends on the full `puppeteer`, whose
// install script downloads a Chrome. Nothing is downloaded: the bench points it at the Chromium of
// @sparticuz/chromium, the binary the service itself uses.
module.exports = { skipDownload: true };
