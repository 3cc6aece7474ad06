import fc from 'fast-check';

// Every fast-check property of this test file runs from the run's seed (propertySeed.global.ts
// chose and printed it); a failure's message names the seed and the path to replay it.
const seed = Number(process.env.KEEL_FC_SEED);
if (Number.isInteger(seed)) fc.configureGlobal({ ...fc.readConfigureGlobal(), seed });
