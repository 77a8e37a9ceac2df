#!/usr/bin/env python3
"""Writes manifest/testdata/vectors.json: the test vectors of
docs/manifest-format.md.

This is a second implementation of the format, written from the
specification, not from the Go code: for every valid input it computes the
normalized document, its canonical encoding and its digest with Python's
json and hashlib alone. manifest/vectors_test.go checks the Go package
against what it wrote. Run it from the repository root after changing a
vector (and say why in the commit): python3 manifest/testdata/vectors.py
"""
import base64, datetime, hashlib, json, re

H = lambda s: hashlib.sha256(s.encode()).hexdigest()
D = lambda s: 'sha256:' + H(s)


def fingerprint(files):
    lines = ''.join(f['sha256'] + '  ' + f['path'] + '\n' for f in sorted(files, key=lambda f: f['path'].encode()))
    return 'sha256:' + hashlib.sha256(lines.encode()).hexdigest()


def rfc3339(s):
    """A time as the format writes it: seconds, a fraction without trailing
    zeros (none when zero), Z for a zero offset, else +HH:MM."""
    m = re.fullmatch(r'(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d)(\.\d+)?(Z|[+-]\d\d:\d\d)', s)
    assert m, s
    frac = (m.group(2) or '').rstrip('0')
    if frac == '.':
        frac = ''
    off = m.group(3)
    if off in ('Z', '+00:00'):
        off = 'Z'
    return m.group(1) + frac + off


def b64(v):
    return base64.b64encode(base64.b64decode(v, validate=True)).decode()


def fields(d, keys, optional=()):
    """The keys of d, in the format's order: a required one always, an
    optional one only when present and not empty."""
    return {k: d[k] for k in keys if k not in optional or d.get(k)}


def normalize(doc):
    r = doc['release']
    release = {'name': r['name'], 'generation': r['generation'], 'createdAt': rfc3339(r['createdAt'])}
    if r.get('expiresAt') is not None:
        release['expiresAt'] = rfc3339(r['expiresAt'])
    if r.get('source') is not None:
        s = r['source']
        release['source'] = {k: s[k] for k in ('repository', 'commit', 'ref', 'workflowRunURL') if s.get(k)}
    images = None
    if doc.get('images') is not None:
        images = []
        for im in doc['images']:
            out = fields(im, ('name', 'ref', 'repository', 'tag', 'digest', 'mediaType'), {'tag'})
            out['platforms'] = [fields(p, ('os', 'architecture', 'variant', 'digest', 'config'), {'variant'})
                                for p in im['platforms']]
            images.append(out)
    a = doc.get('assets') or {}
    assets = fields(a, ('origin',), {'origin'})
    assets['cdn'] = a.get('cdn')
    files = None
    if a.get('files') is not None:
        files = [fields(f, ('path', 'size', 'sha256', 'contentType', 'loads', 'served'), {'contentType', 'loads', 'served'}) for f in a['files']]
    assets['files'] = files
    if a.get('fingerprint'):
        assets['fingerprint'] = a['fingerprint']
    out = {'apiVersion': doc['apiVersion'], 'kind': doc['kind'], 'release': release, 'images': images, 'assets': assets}
    if doc.get('verification') is not None:
        v = {}
        sigs = doc['verification'].get('signatures')
        if sigs:
            v['signatures'] = []
            for s in sigs:
                t = {'digest': s['digest'], 'payload': s['payload'], 'signature': s['signature']}
                for k in ('certificate', 'chain'):
                    if s.get(k):
                        t[k] = s[k]
                for k in ('bundle', 'rfc3161Timestamp'):
                    if s.get(k):
                        t[k] = b64(s[k])
                v['signatures'].append(t)
        atts = doc['verification'].get('attestations')
        if atts:
            v['attestations'] = []
            for a in atts:
                t = {'digest': a['digest'], 'mediaType': a['mediaType'], 'content': b64(a['content'])}
                for k in ('certificate', 'chain'):
                    if a.get(k):
                        t[k] = a[k]
                for k in ('bundle', 'rfc3161Timestamp'):
                    if a.get(k):
                        t[k] = b64(a[k])
                v['attestations'].append(t)
        out['verification'] = v
    return out


def canonical(v):
    s = json.dumps(v, sort_keys=True, separators=(',', ':'), ensure_ascii=False)
    # JSON text may hold U+2028 and U+2029 raw; the format escapes them, as
    # JavaScript source cannot hold them.
    return s.replace('\u2028', '\\u2028').replace('\u2029', '\\u2029')


# ---- the inputs
WEB = {
    'name': 'web', 'ref': 'registry.example/store/web:v1', 'repository': 'registry.example/store/web', 'tag': 'v1',
    'digest': D('index'), 'mediaType': 'application/vnd.oci.image.index.v1+json',
    'platforms': [
        {'os': 'linux', 'architecture': 'amd64', 'digest': D('amd64'), 'config': D('amd64 config')},
        {'os': 'linux', 'architecture': 'arm64', 'variant': 'v8', 'digest': D('arm64'), 'config': D('arm64 config')},
    ],
}
FILES = [
    {'path': 'assets/app-1a2b.js', 'size': 1234, 'sha256': H('app'), 'contentType': 'text/javascript; charset=utf-8'},
    {'path': 'index.html', 'size': 512, 'sha256': H('index'), 'contentType': 'text/html; charset=utf-8'},
]
GRAPH = [
    {'path': 'assets/app-1a2b.js', 'size': 1234, 'sha256': H('app'), 'loads': ['assets/app-9f8e.css', 'assets/lazy-3c4d.js']},
    {'path': 'assets/app-9f8e.css', 'size': 300, 'sha256': H('css'), 'loads': ['assets/font-5e6f.woff2']},
    {'path': 'assets/font-5e6f.woff2', 'size': 900, 'sha256': H('font')},
    {'path': 'assets/lazy-3c4d.js', 'size': 99, 'sha256': H('lazy'), 'loads': ['assets/app-1a2b.js']},
    {'path': 'index.html', 'size': 512, 'sha256': H('index'), 'loads': ['assets/app-1a2b.js', 'assets/app-9f8e.css']},
]
SPLIT = [
    {'path': '_next/static/chunks/app-1a2b.js', 'size': 1234, 'sha256': H('app'), 'loads': ['index.txt'], 'served': 'cdn-and-instance'},
    {'path': 'favicon.ico', 'size': 100, 'sha256': H('icon'), 'served': 'instance'},
    {'path': 'index.html', 'size': 512, 'sha256': H('index'), 'loads': ['_next/static/chunks/app-1a2b.js', 'favicon.ico'], 'served': 'instance'},
    {'path': 'index.txt', 'size': 80, 'sha256': H('rsc'), 'served': 'instance'},
]
REL = {'name': 'store-web', 'generation': 42, 'createdAt': '2026-12-01T10:00:00Z'}
BASE = {'apiVersion': 'lockstep.dev/v1', 'kind': 'ReleaseManifest'}
DSSE = 'application/vnd.dsse.envelope.v1+json'
SOURCE = {'repository': 'https://github.com/acme/store', 'commit': '0123456789abcdef0123456789abcdef01234567'}
ENVELOPE = base64.b64encode(json.dumps({'payloadType': 'application/vnd.in-toto+json', 'payload': 'e30=',
                                        'signatures': [{'keyid': '', 'sig': 'MEUCIQ=='}]}).encode()).decode()
ATTESTATION = {'digest': D('index'), 'mediaType': DSSE, 'content': ENVELOPE}


def doc(**kw):
    d = dict(BASE)
    d.update(kw)
    return d


def compact(d):
    return json.dumps(d, separators=(',', ':'), ensure_ascii=False)


def pretty(d):
    return json.dumps(d, indent=2, ensure_ascii=False) + '\n'


valid = [
    ('image only, no assets key', 'The assets object is always written; its absent lists are null.',
     compact(doc(release=REL, images=[WEB]))),
    ('assets only, indented, keys in another order',
     'White space and key order do not change the digest; images absent is null.',
     pretty({'assets': {'files': FILES, 'cdn': ['https://cdn.example/store/'], 'fingerprint': fingerprint(FILES)},
             'release': {'createdAt': REL['createdAt'], 'generation': 42, 'name': 'store-web'},
             'kind': 'ReleaseManifest', 'apiVersion': 'lockstep.dev/v1'})),
    ('every field', 'expiresAt, source, origin, content types, an embedded signature with a bundle.',
     compact(doc(release=dict(REL, expiresAt='2027-01-01T00:00:00Z',
                              source={'repository': 'https://github.com/acme/store', 'commit': 'abc123',
                                      'ref': 'refs/heads/main',
                                      'workflowRunURL': 'https://github.com/acme/store/actions/runs/42'}),
                 images=[WEB],
                 assets={'cdn': ['https://cdn.example/store/', 'https://cdn2.example/store/'],
                         'origin': 'https://origin.example/store/', 'files': FILES, 'fingerprint': fingerprint(FILES)},
                 verification={'signatures': [{'digest': D('amd64'), 'payload': base64.b64encode(b'{"critical":{}}').decode(),
                                               'signature': 'MEUCIQ==', 'bundle': base64.b64encode(b'{"SignedEntryTimestamp":"x"}').decode()}]}))),
    ('times are normalized', 'A zero fraction and a +00:00 offset are written as the format writes times; another offset is kept.',
     compact(doc(release=dict(REL, createdAt='2026-12-01T10:00:00.000+00:00', expiresAt='2026-12-31T12:30:00.250+02:00'),
                 images=[WEB]))),
    ('empty optional fields are left out, empty objects kept',
     'tag, variant, contentType and origin given empty are not written; an empty source object is; an empty images list is [].',
     compact(doc(release=dict(REL, source={}), images=[],
                 assets={'cdn': ['https://cdn.example/'], 'origin': '',
                         'files': [{'path': 'a.txt', 'size': 0, 'sha256': H(''), 'contentType': ''}],
                         'fingerprint': fingerprint([{'path': 'a.txt', 'sha256': H('')}])}))),
    ('strings: escapes decoded, no HTML escaping, U+2028 escaped',
     'A \\u escape in the input is written as the character; <, > and & stay as they are; U+2028 is written \\u2028.',
     '{"apiVersion":"lockstep.dev/v1","kind":"ReleaseManifest","release":{"name":"store-web","generation":7,'
     '"createdAt":"2026-12-01T10:00:00Z","source":{"ref":"refs/tags/<v1>&\\u2028x","commit":"\\u00e9t\\u00e9"}},'
     '"assets":{"cdn":["https://cdn.example/"],"files":[{"path":"caf\\u00e9/\u00fc.js","size":1,"sha256":"' + H('u') + '"}],'
     '"fingerprint":"' + fingerprint([{'path': 'café/ü.js', 'sha256': H('u')}]) + '"}}'),
    ('v2: the asset graph', 'A file lists the files it loads (sorted, each a file of the manifest); apiVersion v2.',
     compact(doc(apiVersion='lockstep.dev/v2', release=REL, images=[WEB],
                 assets=dict(cdn=['https://cdn.example/store/'], fingerprint=fingerprint(GRAPH), files=GRAPH)))),
    ('v2: embedded attestations', 'A DSSE envelope (base64) found for the index, with a keyless certificate and chain; apiVersion v2.',
     compact(doc(apiVersion='lockstep.dev/v2', release=dict(REL, source=SOURCE), images=[WEB],
                 verification={'attestations': [dict(ATTESTATION, certificate='-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n',
                                                     chain='', bundle='')]}))),
    ('v2 without a graph', 'A v2 manifest need not use a v2 field; an empty loads is not written.',
     compact(doc(apiVersion='lockstep.dev/v2', release=REL,
                 assets={'cdn': ['https://cdn.example/'], 'files': [dict(FILES[0], loads=[]), FILES[1]],
                         'fingerprint': fingerprint(FILES)}))),
    ('v3: where files are served', 'The instance serves some files itself (served: instance), one both (cdn-and-instance); the others, with no served, the CDN; apiVersion v3.',
     compact(doc(apiVersion='lockstep.dev/v3', release=REL, images=[WEB],
                 assets=dict(cdn=['https://cdn.example/'], fingerprint=fingerprint(SPLIT), files=SPLIT)))),
    ('v3 without served', 'A v3 manifest need not use a v3 field; an empty served is not written.',
     compact(doc(apiVersion='lockstep.dev/v3', release=REL,
                 assets={'cdn': ['https://cdn.example/'], 'files': [dict(FILES[0], served=''), FILES[1]],
                         'fingerprint': fingerprint(FILES)}))),
]

base_files = {'cdn': ['https://cdn.example/'], 'files': FILES, 'fingerprint': fingerprint(FILES)}
ok = compact(doc(release=REL, images=[WEB]))
invalid = [
    ('a duplicate key', 'release.name', ok.replace('"name":"store-web"', '"name":"store-web","name":"other"')),
    ('a key in another case', 'Kind', ok.replace('"kind":"ReleaseManifest"', '"kind":"ReleaseManifest","Kind":"X"')),
    ('an unknown field, deep', 'images[0].platforms[1].extra', ok.replace('"variant":"v8"', '"variant":"v8","extra":1')),
    ('trailing data', '', ok + ' {}'),
    ('another apiVersion', 'apiVersion', ok.replace('lockstep.dev/v1', 'lockstep.dev/v4')),
    ('served in a v2 manifest', 'assets.files[1].served',
     compact(doc(apiVersion='lockstep.dev/v2', release=REL, assets=dict(base_files, files=[FILES[0], dict(FILES[1], served='instance')])))),
    ('served: cdn, the default spelled out', 'assets.files[0].served',
     compact(doc(apiVersion='lockstep.dev/v3', release=REL, assets=dict(base_files, files=[dict(FILES[0], served='cdn'), FILES[1]])))),
    ('served somewhere unknown', 'assets.files[0].served',
     compact(doc(apiVersion='lockstep.dev/v3', release=REL, assets=dict(base_files, files=[dict(FILES[0], served='origin'), FILES[1]])))),
    ('served in another case', 'assets.files[0].served',
     compact(doc(apiVersion='lockstep.dev/v3', release=REL, assets=dict(base_files, files=[dict(FILES[0], served='Instance'), FILES[1]])))),
    ('served twice', 'assets.files[0].served',
     compact(doc(apiVersion='lockstep.dev/v3', release=REL, assets=dict(base_files, files=[dict(FILES[0], served='instance'), FILES[1]]))).replace(
         '"served":"instance"', '"served":"instance","served":"instance"')),
    ('loads in a v1 manifest', 'assets.files[1].loads',
     compact(doc(release=REL, assets=dict(base_files, files=[FILES[0], dict(FILES[1], loads=['assets/app-1a2b.js'])])))),
    ('attestations in a v1 manifest', 'verification.attestations',
     compact(doc(release=dict(REL, source=SOURCE), images=[WEB], verification={'attestations': [ATTESTATION]}))),
    ('an attestation of an unknown form', 'verification.attestations[0].mediaType',
     compact(doc(apiVersion='lockstep.dev/v2', release=dict(REL, source=SOURCE), images=[WEB],
                 verification={'attestations': [dict(ATTESTATION, mediaType='application/json')]}))),
    ('an attestation without content', 'verification.attestations[0].content',
     compact(doc(apiVersion='lockstep.dev/v2', release=dict(REL, source=SOURCE), images=[WEB],
                 verification={'attestations': [dict(ATTESTATION, content='')]}))),
    ('an unknown field in an attestation', 'verification.attestations[0].payload',
     compact(doc(apiVersion='lockstep.dev/v2', release=dict(REL, source=SOURCE), images=[WEB],
                 verification={'attestations': [dict(ATTESTATION, payload='e30=')]}))),
    ('a file that loads a path outside the manifest', 'assets.files[1].loads[0]',
     compact(doc(apiVersion='lockstep.dev/v2', release=REL,
                 assets=dict(base_files, files=[FILES[0], dict(FILES[1], loads=['assets/gone.js'])])))),
    ('a file that loads itself', 'assets.files[0].loads[0]',
     compact(doc(apiVersion='lockstep.dev/v2', release=REL,
                 assets=dict(base_files, files=[dict(FILES[0], loads=['assets/app-1a2b.js']), FILES[1]])))),
    ('loads twice the same path', 'assets.files[1].loads[1]',
     compact(doc(apiVersion='lockstep.dev/v2', release=REL,
                 assets=dict(base_files, files=[FILES[0], dict(FILES[1], loads=['assets/app-1a2b.js', 'assets/app-1a2b.js'])])))),
    ('an unsafe path in loads', 'assets.files[1].loads[0]',
     compact(doc(apiVersion='lockstep.dev/v2', release=REL,
                 assets=dict(base_files, files=[FILES[0], dict(FILES[1], loads=['../app-1a2b.js'])])))),
    ('an upper-case digest', 'images[0].digest', ok.replace(D('index'), D('index').upper().replace('SHA256', 'sha256'))),
    ('a generation that is not an integer', 'release.generation', ok.replace('"generation":42', '"generation":4.2')),
    ('generation 0', 'release.generation', ok.replace('"generation":42', '"generation":0')),
    ('files not sorted', 'assets.files[1].path',
     compact(doc(release=REL, assets=dict(base_files, files=FILES[::-1])))),
    ('a wrong fingerprint', 'assets.fingerprint',
     compact(doc(release=REL, assets=dict(base_files, fingerprint=D('nothing'))))),
    ('a ".." segment', 'assets.files[0].path',
     compact(doc(release=REL, assets={'cdn': ['https://cdn.example/'], 'files': [dict(FILES[0], path='../x.js')],
                                      'fingerprint': fingerprint([dict(FILES[0], path='../x.js')])}))),
    ('a path not in NFC', 'assets.files[0].path',
     compact(doc(release=REL, assets={'cdn': ['https://cdn.example/'], 'files': [dict(FILES[0], path='cafe\u0301.js')],
                                      'fingerprint': fingerprint([dict(FILES[0], path='cafe\u0301.js')])}))),
    ('a lone surrogate', '', ok.replace('"ref":"registry.example/store/web:v1"', '"ref":"registry.example/store/web:v1\\ud800"')),
    ('files without a CDN', 'assets.cdn', compact(doc(release=REL, assets=dict(base_files, cdn=[])))),
    ('neither image nor asset', '', compact(doc(release=REL))),
]

out = {'comment': 'Test vectors of docs/manifest-format.md, written by manifest/testdata/vectors.py from the '
                   'specification; manifest/vectors_test.go checks the Go package against them. input is the '
                   'document byte for byte (a JSON string); a valid one has its canonical encoding and digest, '
                   'an invalid one the field its error names ("" for the document).',
       'valid': [], 'invalid': []}
for name, why, text in valid:
    c = canonical(normalize(json.loads(text)))
    out['valid'].append({'name': name, 'why': why, 'input': text, 'canonical': c,
                         'digest': 'sha256:' + hashlib.sha256(c.encode()).hexdigest()})
for name, field, text in invalid:
    out['invalid'].append({'name': name, 'input': text, 'field': field})
with open('manifest/testdata/vectors.json', 'w') as f:
    json.dump(out, f, indent=2, ensure_ascii=False)
    f.write('\n')
