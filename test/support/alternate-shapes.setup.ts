/**
 * Set-up of the jest project "alternate-shapes": the end-to-end suites run once more with
 * the sandbox answering in its alternate shapes (epoch-millisecond times, date-time due
 * dates, amounts as text where the spec allows any, no expires_in, unknown fields), to
 * show that the bridge reads every shape the spec leaves open.
 */
process.env.TEST_SANDBOX_SHAPES = 'alternate';
