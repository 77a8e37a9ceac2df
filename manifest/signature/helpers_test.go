package signature_test

import (
	"crypto/ecdsa"
	"crypto/x509"
)

func x509MarshalEC(k *ecdsa.PrivateKey) ([]byte, error) { return x509.MarshalECPrivateKey(k) }
