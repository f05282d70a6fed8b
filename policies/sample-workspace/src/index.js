// A tiny price list: the sample workspace's "project". `node src/index.js atlas` prints a price;
// the researcher subagent runs it to look prices up.
'use strict';

const PRICES = {
  atlas: 129.0,
  beacon: 49.5,
  compass: 18.25,
};

/** The price of a product in euros, or undefined for a product that is not sold. */
function lookupPrice(product) {
  const key = String(product).trim().toLowerCase();
  return Object.prototype.hasOwnProperty.call(PRICES, key) ? PRICES[key] : undefined;
}

module.exports = { PRICES, lookupPrice };

if (require.main === module) {
  const product = process.argv[2];
  if (!product) {
    console.error('usage: node src/index.js PRODUCT');
    process.exitCode = 2;
  } else {
    const price = lookupPrice(product);
    if (price === undefined) {
      console.error(`no price for "${product}"`);
      process.exitCode = 1;
    } else {
      // No trailing newline: agents quote this output inside sentences.
      process.stdout.write(`${product}: €${price.toFixed(2)}`);
    }
  }
}
