// Ends the run with one plain line, "jest: N passed, N failed, N skipped", that CI and
// people can read without knowing Jest's own summary format. Jest prints its summary on
// stderr, so the line goes there too (after it); it is repeated on stdout for readers that
// capture stdout alone.
class SummaryReporter {
  onRunComplete(_contexts, results) {
    const line = `jest: ${results.numPassedTests} passed, ${results.numFailedTests} failed, ${results.numPendingTests} skipped`;
    process.stdout.write(`\n${line}\n`);
    setImmediate(() => process.stderr.write(`\n${line}\n`));
  }
}
module.exports = SummaryReporter;
