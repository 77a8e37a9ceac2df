package imagename

import (
	"net/netip"
	"testing"
)

// glibcInetAton are inet_aton's answers on glibc 2.36 (Python's
// socket.inet_aton, which calls it, on the machine that wrote them): the
// address in dotted-quad form, or "" where inet_aton returns 0.
var glibcInetAton = []struct{ in, want string }{
	{"127.1", "127.0.0.1"},
	{"2130706433", "127.0.0.1"},
	{"0x7f000001", "127.0.0.1"},
	{"0x7f.1", "127.0.0.1"},
	{"0177.0.0.1", "127.0.0.1"},
	{"127.000.000.001", "127.0.0.1"},
	{"0x7f.0.0.1", "127.0.0.1"},
	{"127.0.1", "127.0.0.1"},
	{"0x7F.0X0.00.1", "127.0.0.1"},
	{"1.2.3.4", "1.2.3.4"},
	{"1.2.3.4.5", ""},
	{"256.1.1.1", ""},
	{"1.256", "1.0.1.0"},
	{"1.65535", "1.0.255.255"},
	{"1.65536", "1.1.0.0"},
	{"1.2.65535", "1.2.255.255"},
	{"1.2.65536", ""},
	{"1.2.3.256", ""},
	{"4294967295", "255.255.255.255"},
	{"4294967296", ""},
	{"0x", ""},
	{"0x.1", ""},
	{"0x1.0x", ""},
	{"08", ""},
	{"09.1.1.1", ""},
	{"0", "0.0.0.0"},
	{"00", "0.0.0.0"},
	{"0x0", "0.0.0.0"},
	{"1..2", ""},
	{".1", ""},
	{"1.", ""},
	{"1.2.3.", ""},
	{"0xg", ""},
	{"0x100000000", ""},
	{"99999999999", ""},
	{"00000000000000000000000000000000177.1", "127.0.0.1"},
	{"0x00000000000000007f.1", "127.0.0.1"},
	{"017777777777", "127.255.255.255"},
	{"037777777777", "255.255.255.255"},
	{"040000000000", ""},
	{"1e1", ""},
	{"127.0.0.1a", ""},
	{"0xffffffff", "255.255.255.255"},
	{"0xFFFFFFFF", "255.255.255.255"},
	{"0x1ffffffff", ""},
	{"10.0x10.010.1", "10.16.8.1"},
	{"4294967296.1", ""},
	{"0x7f.0x1", "127.0.0.1"},
	{"0377.0377.0377.0377", "255.255.255.255"},
	{"0400.1.1.1", ""},
	{"-1", ""},
	{"+1", ""},
	{"1.2.3.04", "1.2.3.4"},
	{"1.08", ""},
	{"0x7f.0.1", "127.0.0.1"},
	{"10.1", "10.0.0.1"},
	{"167772161", "10.0.0.1"},
	{"012.0.0.1", "10.0.0.1"},
	{"0xa.0xb.0xc.0xd", "10.11.12.13"},
	{"1.0xffffff", "1.255.255.255"},
	{"1.0x1000000", ""},
	{"1.2.0xffff", "1.2.255.255"},
	{"1.2.0x10000", ""},
	{"0x0.0x0.0x0.0x0", "0.0.0.0"},
	{"00x1", ""},
	{"0xx1", ""},
	{"0X", ""},
	{"1.2.3.0x", ""},
	{"١٢٧.1", ""},
	{"0x7f.1.", ""},
	{"a.1", ""},
	{"1.a", ""},
	{"0x7f.01", "127.0.0.1"},
	{"255.255.255.255", "255.255.255.255"},
	{"0.0.0.0", "0.0.0.0"},
	{"1.2.3.-4", ""},
	{" 1", ""},
}

func TestInetAton(t *testing.T) {
	for _, tt := range glibcInetAton {
		a, ok := inetAton(tt.in)
		got := ""
		if ok {
			got = a.String()
		}
		if got != tt.want {
			t.Errorf("inetAton(%q) = %q, want %q (glibc)", tt.in, got, tt.want)
		}
	}
}

// FuzzNumericHost holds inetAton to glibc's answers (the seeds) and to its
// own invariants: an address it returns is one, its dotted quad parses to
// itself (by inetAton and by netip), and numericHost either leaves a host
// that does not end in a number alone, or gives that dotted quad, or
// refuses.
func FuzzNumericHost(f *testing.F) {
	known := map[string]string{}
	for _, tt := range glibcInetAton {
		f.Add(tt.in)
		known[tt.in] = tt.want
	}
	f.Add("registry.example.com")
	f.Add("10.0.0.5")
	f.Fuzz(func(t *testing.T, s string) {
		a, ok := inetAton(s)
		if want, isKnown := known[s]; isKnown && (ok != (want != "") || ok && a.String() != want) {
			t.Fatalf("inetAton(%q) = %v, %v; glibc says %q", s, a, ok, want)
		}
		if ok {
			if !a.Is4() {
				t.Fatalf("inetAton(%q) = %v, not IPv4", s, a)
			}
			again, ok2 := inetAton(a.String())
			if !ok2 || again != a {
				t.Fatalf("inetAton(%q) = %v, whose dotted quad parses to %v, %v", s, a, again, ok2)
			}
			if p, err := netip.ParseAddr(a.String()); err != nil || p != a {
				t.Fatalf("inetAton(%q) = %v: netip reads %v, %v", s, a, p, err)
			}
		}
		n, err := numericHost(s)
		switch {
		case err != nil:
			if ok || !endsInNumber(s) {
				t.Fatalf("numericHost(%q) refused (%v), but inetAton = %v, endsInNumber = %v", s, err, ok, endsInNumber(s))
			}
		case !endsInNumber(s):
			if n != s {
				t.Fatalf("numericHost(%q) = %q, want it unchanged", s, n)
			}
		default:
			if !ok || n != a.String() {
				t.Fatalf("numericHost(%q) = %q, want %v", s, n, a)
			}
			if again, err := numericHost(n); err != nil || again != n {
				t.Fatalf("numericHost(%q) = %q, which gives %q, %v", s, n, again, err)
			}
		}
	})
}
