import { INestApplication } from '@nestjs/common';
import { DocumentBuilder, OpenAPIObject, SwaggerModule } from '@nestjs/swagger';

/** Sorts object keys recursively, so the committed openapi.json only changes when the API does. */
function sortKeys(value: unknown): unknown {
  if (Array.isArray(value)) {
    return value.map(sortKeys);
  }
  if (value && typeof value === 'object') {
    return Object.fromEntries(
      Object.keys(value)
        .sort()
        .map((key) => [key, sortKeys((value as Record<string, unknown>)[key])]),
    );
  }
  return value;
}

export function buildOpenApiDocument(app: INestApplication): OpenAPIObject {
  const config = new DocumentBuilder()
    .setTitle('LLM Gateway')
    .setDescription(
      'One key and one base URL for every model family, in the OpenAI chat-completions wire format, ' +
        'billed by tokens against a prepaid balance. Amounts are exact decimal strings in USD.',
    )
    .setVersion('1')
    .addBearerAuth({ type: 'http', scheme: 'bearer', description: 'A customer key, `sk-…`' }, 'apiKey')
    .addBearerAuth({ type: 'http', scheme: 'bearer', bearerFormat: 'JWT', description: 'Console session' }, 'console')
    .addSecurity('admin', { type: 'http', scheme: 'bearer', description: 'ADMIN_TOKEN' })
    .build();
  const document = SwaggerModule.createDocument(app, config, {
    operationIdFactory: (_controllerKey, methodKey) => methodKey,
  });
  return sortKeys(document) as OpenAPIObject;
}
