import { test } from 'node:test';
import assert from 'node:assert/strict';
import { greet, timeOfDayGreeting } from './greet.js';

test('a casual greeting by default', () => {
  assert.equal(greet('Ada'), 'Hello, Ada!');
});

test('a formal greeting depends on the hour', () => {
  assert.equal(greet('Ada', { tone: 'formal', hour: 9 }), 'Good morning, Ada.');
  assert.equal(greet('Ada', { tone: 'formal', hour: 15 }), 'Good afternoon, Ada.');
  assert.equal(greet('Ada', { tone: 'formal', hour: 21 }), 'Good evening, Ada.');
});

test('the time-of-day boundaries', () => {
  assert.equal(timeOfDayGreeting(11), 'Good morning');
  assert.equal(timeOfDayGreeting(12), 'Good afternoon');
  assert.equal(timeOfDayGreeting(18), 'Good evening');
});
