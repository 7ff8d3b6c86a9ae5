import { loadConfig } from 'src/config/app-config';

describe('tracing config', () => {
  const base = { NODE_ENV: 'test' };

  it('should be off without an OTLP endpoint', () => {
    expect(loadConfig(base).tracing).toBeNull();
  });

  it("should send to the base endpoint's /v1/traces, and take the service name", () => {
    const config = loadConfig({
      ...base,
      OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318/',
      OTEL_SERVICE_NAME: 'gw',
    });

    expect(config.tracing).toEqual({ tracesUrl: 'http://collector:4318/v1/traces', serviceName: 'gw' });
  });

  it('should take the traces endpoint as it is, over the base one', () => {
    const config = loadConfig({
      ...base,
      OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318',
      OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'https://traces.example.com/otlp/spans',
    });

    expect(config.tracing).toEqual({ tracesUrl: 'https://traces.example.com/otlp/spans', serviceName: null });
  });

  it('should be off when OTEL_SDK_DISABLED is true', () => {
    const config = loadConfig({
      ...base,
      OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318',
      OTEL_SDK_DISABLED: 'TRUE',
    });

    expect(config.tracing).toBeNull();
  });

  it('should refuse an endpoint that is not an http(s) URL', () => {
    expect(() => loadConfig({ ...base, OTEL_EXPORTER_OTLP_ENDPOINT: 'collector:4318' })).toThrow(
      'Invalid environment variable OTEL_EXPORTER_OTLP_ENDPOINT',
    );
  });
});
