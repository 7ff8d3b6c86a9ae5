import pino from 'pino';
import { PinoNestLogger } from 'src/common/logging/logger';

function loggerAt(level: string) {
  const lines: Record<string, unknown>[] = [];
  const destination = { write: (line: string) => lines.push(JSON.parse(line) as Record<string, unknown>) };
  return { sut: new PinoNestLogger(pino({ level }, destination)), lines };
}

describe(PinoNestLogger.name, () => {
  it("should keep Nest's start-up narration out of the default level, and its warnings and errors in", () => {
    const { sut, lines } = loggerAt('info');

    sut.log('Mapped {/v1/models, GET} route', 'RouterExplorer');
    sut.warn('a warning', 'Ctx');
    sut.error('an error', 'trace', 'Ctx');

    expect(lines.map((line) => [line.level, line.msg])).toEqual([
      [40, 'a warning'],
      [50, 'an error'],
    ]);
  });

  it('should show the narration at LOG_LEVEL=debug', () => {
    const { sut, lines } = loggerAt('debug');

    sut.log('Nest application successfully started', 'NestApplication');

    expect(lines).toEqual([expect.objectContaining({ level: 20, context: 'NestApplication' })]);
  });
});
