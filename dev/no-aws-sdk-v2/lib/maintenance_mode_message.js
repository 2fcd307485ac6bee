// The one module of aws-sdk v2 that sst@2 loads (node_modules/sst/credentials.js sets `suppress`).
module.exports = { suppress: false };
