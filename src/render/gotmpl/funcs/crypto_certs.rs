//! Certificates, private keys, derivePassword and AES (Sprig crypto.go). Not implemented
//! yet: each returns an error naming the function, so a chart using them fails loudly
//! instead of rendering something that looks valid.

use super::super::value::Value;
use super::FuncEnv;

type R = Result<Value, String>;

fn unsupported(name: &str) -> R {
    Err(format!("{name} is not supported by this renderer yet"))
}

pub fn gen_private_key(_: &mut FuncEnv, _: &[Value]) -> R {
    unsupported("genPrivateKey")
}
pub fn build_custom_cert(_: &mut FuncEnv, _: &[Value]) -> R {
    unsupported("buildCustomCert")
}
pub fn gen_ca(_: &mut FuncEnv, _: &[Value]) -> R {
    unsupported("genCA")
}
pub fn gen_ca_with_key(_: &mut FuncEnv, _: &[Value]) -> R {
    unsupported("genCAWithKey")
}
pub fn gen_self_signed_cert(_: &mut FuncEnv, _: &[Value]) -> R {
    unsupported("genSelfSignedCert")
}
pub fn gen_self_signed_cert_with_key(_: &mut FuncEnv, _: &[Value]) -> R {
    unsupported("genSelfSignedCertWithKey")
}
pub fn gen_signed_cert(_: &mut FuncEnv, _: &[Value]) -> R {
    unsupported("genSignedCert")
}
pub fn gen_signed_cert_with_key(_: &mut FuncEnv, _: &[Value]) -> R {
    unsupported("genSignedCertWithKey")
}
pub fn derive_password(_: &mut FuncEnv, _: &[Value]) -> R {
    unsupported("derivePassword")
}
pub fn encrypt_aes(_: &mut FuncEnv, _: &[Value]) -> R {
    unsupported("encryptAES")
}
pub fn decrypt_aes(_: &mut FuncEnv, _: &[Value]) -> R {
    unsupported("decryptAES")
}
