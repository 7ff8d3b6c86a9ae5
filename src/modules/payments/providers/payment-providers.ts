import { Inject, Injectable } from '@nestjs/common';
import { APP_CONFIG, AppConfig } from 'src/config/app-config';
import { AlipayProvider } from 'src/modules/payments/providers/alipay/alipay.provider';
import { PaymentProvider, WalletMethod } from 'src/modules/payments/providers/payment-provider';
import { WechatPayProvider } from 'src/modules/payments/providers/wechatpay/wechatpay.provider';

/** The wallets this deployment is configured for; a method whose variables are unset is simply absent. */
@Injectable()
export class PaymentProviders {
  private readonly providers = new Map<WalletMethod, PaymentProvider>();

  constructor(@Inject(APP_CONFIG) config: AppConfig) {
    const { publicBaseUrl, alipay, wechatpay } = config.payments;
    if (publicBaseUrl && alipay) {
      this.providers.set('alipay', new AlipayProvider(alipay, `${publicBaseUrl}/webhooks/alipay`));
    }
    if (publicBaseUrl && wechatpay) {
      this.providers.set('wechatpay', new WechatPayProvider(wechatpay, `${publicBaseUrl}/webhooks/wechatpay`));
    }
  }

  get(method: string | null): PaymentProvider | undefined {
    return this.providers.get(method as WalletMethod);
  }
}
