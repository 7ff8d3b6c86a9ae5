import { errorLogFields } from 'src/common/filters/error-log-fields';

describe(errorLogFields.name, () => {
  it('should keep the class, code and frames of an error but not its message, which may quote content', () => {
    let error: Error | undefined;
    try {
      JSON.parse('{"messages": "the customer said hello"');
    } catch (caught) {
      error = caught as Error;
    }
    const fields = errorLogFields(error);
    expect(fields).toEqual({ type: 'SyntaxError', frames: expect.any(Array) });
    expect(fields.frames!.length).toBeGreaterThan(0);
    expect(JSON.stringify(fields)).not.toContain('hello');
  });

  it('should keep a system error code', () => {
    const error = Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' });
    expect(errorLogFields(error)).toMatchObject({ type: 'Error', code: 'ECONNREFUSED' });
  });

  it('should name the type of a thrown non-error without its value', () => {
    expect(errorLogFields('sk-secret')).toEqual({ type: 'string' });
  });
});
