import { Module } from '@nestjs/common';
import { UsageController } from 'src/modules/usage/usage.controller';
import { UsageRepository } from 'src/modules/usage/usage.repository';
import { UsageService } from 'src/modules/usage/usage.service';

@Module({
  controllers: [UsageController],
  providers: [UsageRepository, UsageService],
})
export class UsageModule {}
