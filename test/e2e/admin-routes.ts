import { RequestMethod } from '@nestjs/common';
import { METHOD_METADATA, PATH_METADATA } from '@nestjs/common/constants';
import { ModulesContainer } from '@nestjs/core';
import { NestFastifyApplication } from '@nestjs/platform-fastify';
import { ADMIN_PERMISSION, AdminPermission } from 'src/common/decorators/admin-permissions';
import { AUTH_KIND, AuthKind } from 'src/common/decorators/auth.decorators';

/** One route of the admin API as Nest registered it, with the permission it declares (if any). */
export interface AdminRoute {
  method: string;
  /** Fastify's pattern, e.g. `/admin/accounts/:accountId/usage`. */
  path: string;
  permission: AdminPermission | undefined;
}

const joinPath = (...parts: string[]) =>
  '/' +
  parts
    .flatMap((part) => part.split('/'))
    .filter(Boolean)
    .join('/');

const pathsOf = (value: unknown): string[] =>
  Array.isArray(value) ? (value as string[]) : [typeof value === 'string' ? value : ''];

/**
 * Every handler of every controller the app registered whose auth kind is `admin` (the same
 * metadata the auth guard reads), so a route added anywhere later is listed without editing a test.
 */
export function adminRoutesOf(app: NestFastifyApplication): AdminRoute[] {
  const routes: AdminRoute[] = [];
  for (const module of app.get(ModulesContainer).values()) {
    for (const wrapper of module.controllers.values()) {
      const controller = wrapper.metatype as (new (...args: never[]) => unknown) | null;
      if (!controller) {
        continue;
      }
      const prototype = controller.prototype as Record<string, unknown>;
      for (const name of Object.getOwnPropertyNames(prototype)) {
        const handler = prototype[name];
        if (typeof handler !== 'function' || name === 'constructor') {
          continue;
        }
        const verb = Reflect.getMetadata(METHOD_METADATA, handler) as RequestMethod | undefined;
        if (verb === undefined) {
          continue;
        }
        const kind = (Reflect.getMetadata(AUTH_KIND, handler) ?? Reflect.getMetadata(AUTH_KIND, controller)) as
          AuthKind | undefined;
        if (kind !== AuthKind.Admin) {
          continue;
        }
        const permission = (Reflect.getMetadata(ADMIN_PERMISSION, handler) ??
          Reflect.getMetadata(ADMIN_PERMISSION, controller)) as AdminPermission | undefined;
        for (const base of pathsOf(Reflect.getMetadata(PATH_METADATA, controller))) {
          for (const own of pathsOf(Reflect.getMetadata(PATH_METADATA, handler))) {
            routes.push({ method: RequestMethod[verb], path: joinPath(base, own), permission });
          }
        }
      }
    }
  }
  return routes.sort((a, b) => `${a.path} ${a.method}`.localeCompare(`${b.path} ${b.method}`));
}
