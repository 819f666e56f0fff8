import { envSchema } from '../../config/app-config.js';

describe('RETENTION_PERSONAL_DATA', () => {
  const parse = (value: string | undefined) =>
    envSchema.shape.RETENTION_PERSONAL_DATA.safeParse(value);

  it('is 90 days unless set, and takes a duration of at least a day', () => {
    expect(parse(undefined)).toMatchObject({ success: true, data: 90 * 86_400_000 });
    expect(parse('30d')).toMatchObject({ success: true, data: 30 * 86_400_000 });
    expect(parse('2160h')).toMatchObject({ success: true, data: 90 * 86_400_000 });
    expect(parse('12h').success).toBe(false);
    expect(parse('ninety days').success).toBe(false);
  });
});
