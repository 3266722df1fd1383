/**
 * The static cost of a rule on a schema, as Kubernetes pins it: the sections of
 * apiextensions-apiserver/pkg/apiserver/schema/cel/celcoststability_test.go
 * TestCelEstimatedCostStability (v1.36) whose schemas orchd types as Kubernetes does, each rule
 * with the cost it asserts. Rows that cannot match are skipped by name below, with why.
 */
import { describe, expect, test } from 'vitest';
import { compileSchemaRule, type CelSchema } from '../../src/cel/index.js';

type S = CelSchema & { nullable?: boolean; 'x-kubernetes-list-type'?: string; 'x-kubernetes-list-map-keys'?: string[] };
const int: S = { type: 'integer' };
const num: S = { type: 'number' };
const str: S = { type: 'string' };
const bool: S = { type: 'boolean' };
const intOrString: S = { 'x-kubernetes-int-or-string': true };
const bytes: S = { type: 'string', format: 'byte' };
const duration: S = { type: 'string', format: 'duration' };
const date: S = { type: 'string', format: 'date' };
const dateTime: S = { type: 'string', format: 'date-time' };
const unknownObj: S = { type: 'object', 'x-kubernetes-preserve-unknown-fields': true };
const anyval: S = { 'x-kubernetes-preserve-unknown-fields': true };
const obj = (properties: Record<string, S>): S => ({ type: 'object', properties });
const vals = (...s: S[]): S => obj(Object.fromEntries(s.map((v, i) => [`val${i + 1}`, v])));
const list = (items: S): S => ({ type: 'array', 'x-kubernetes-list-type': 'atomic', items });
const listSet = (items: S): S => ({ type: 'array', 'x-kubernetes-list-type': 'set', items });
const listMap = (keys: string[], items: S): S => ({ type: 'array', 'x-kubernetes-list-type': 'map', 'x-kubernetes-list-map-keys': keys, items });
const map = (values: S): S => ({ type: 'object', additionalProperties: values });

const MAX_FLOAT = `${BigInt(Number.MAX_VALUE)}.000000`;

const sections: [string, S, [string, number][]][] = [
  [
    'embedded object',
    obj({ embedded: { type: 'object', 'x-kubernetes-embedded-resource': true } }),
    [
      ["self.embedded.kind == 'Pod'", 4],
      ["self.embedded.apiVersion == 'v1'", 4],
      ["self.embedded.metadata.name == 'foo'", 5],
      ["self.embedded.metadata.generateName == 'pickItForMe'", 6],
    ],
  ],
  [
    'embedded object with properties',
    obj({
      embedded: { type: 'object', 'x-kubernetes-embedded-resource': true, properties: { kind: str, apiVersion: str, metadata: obj({ name: str, generateName: str }), spec: obj({ field1: str }) } },
    }),
    [
      ["self.embedded.kind == 'Pod'", 4],
      ["self.embedded.apiVersion == 'v1'", 4],
      ["self.embedded.metadata.name == 'foo'", 5],
      ["self.embedded.metadata.generateName == 'pickItForMe'", 6],
      ["self.embedded.spec.field1 == 'a'", 5],
    ],
  ],
  [
    'embedded object with preserve unknown',
    obj({ embedded: { type: 'object', 'x-kubernetes-embedded-resource': true, 'x-kubernetes-preserve-unknown-fields': true } }),
    [
      ["self.embedded.kind == 'Pod'", 4],
      ["self.embedded.apiVersion == 'v1'", 4],
      ["self.embedded.metadata.name == 'foo'", 5],
      ["self.embedded.metadata.generateName == 'pickItForMe'", 6],
      ['has(self.embedded)', 1],
    ],
  ],
  [
    'preserve unknown fields',
    obj({
      withUnknown: unknownObj,
      withUnknownList: list(unknownObj),
      withUnknownFieldList: list(obj({ fieldOfUnknownType: anyval })),
      anyvalList: list(anyval),
      anyvalMap: map(anyval),
      anyvalField1: anyval,
      anyvalField2: anyval,
    }),
    [
      ['has(self.withUnknown)', 1],
      ['self.withUnknownList.size() == 5', 4],
      ['self.withUnknownList[0] != self.withUnknownList[1]', 6],
      ['self.withUnknownList[1] == self.withUnknownList[2]', 6],
      ['self.withUnknownList[3] == self.withUnknownList[4]', 6],
      ['self.withUnknownFieldList[0] != self.withUnknownFieldList[1]', 6],
      ['self.withUnknownFieldList[1] == self.withUnknownFieldList[2]', 6],
    ],
  ],
  [
    'known and unknown fields',
    obj({ withUnknown: { ...unknownObj, properties: { known: int } }, withUnknownList: list({ ...unknownObj, properties: { known: int } }) }),
    [
      ['self.withUnknown.known == 1', 3],
      ['self.withUnknownList[1] == self.withUnknownList[2]', 6],
      ['self.withUnknownList[0] != self.withUnknownList[1]', 6],
      ['self.withUnknownList[0] != self.withUnknownList[3]', 6],
      ['self.withUnknownList[0] != self.withUnknownList[5]', 6],
      ['self.withUnknownList[3] == self.withUnknownList[4]', 6],
      ['self.withUnknownList[4] != self.withUnknownList[5]', 6],
    ],
  ],
  [
    'container type composition',
    obj({
      obj: obj({ field: str }),
      mapOfMap: { ...map({ ...map(str), maxProperties: 10 }), maxProperties: 10 },
      mapOfObj: map(obj({ field2: str })),
      mapOfListMap: { ...map({ ...listMap(['k'], obj({ k: str, v: str })), maxItems: 10 }), maxProperties: 10 },
      mapOfList: { ...map({ ...list(str), maxItems: 10 }), maxProperties: 10 },
      listMapOfObj: { ...listMap(['k2'], obj({ k2: str, v2: str })), maxItems: 10 },
      listOfMap: { ...list({ ...map(str), maxProperties: 10 }), maxItems: 10 },
      listOfObj: list(obj({ field3: str })),
      listOfListMap: { ...list({ ...listMap(['k'], obj({ k3: str, v3: str })), maxItems: 10 }), maxItems: 10 },
    }),
    [
      ["self.obj.field == 'a'", 4],
      ["self.mapOfMap['x']['y'] == 'b'", 5],
      ["self.mapOfObj['k'].field2 == 'c'", 5],
      ["self.mapOfListMap['o'].exists(e, e.k == '1' && e.v == 'd')", 104],
      ["self.mapOfList['l'][0] == 'e'", 5],
      ["self.listMapOfObj.exists(e, e.k2 == '2' && e.v2 == 'f')", 103],
      ["self.listOfMap[0]['z'] == 'g'", 5],
      ["self.listOfObj[0].field3 == 'h'", 5],
      ["self.listOfListMap[0].exists(e, e.k3 == '3' && e.v3 == 'i')", 104],
      ['self.mapOfMap.map(k, k).map(k, k).size() == 1', 286],
      ['self.mapOfListMap.map(k, k).map(k, k).size() == 1', 286],
      ['self.mapOfList.map(k, k).map(k, k).size() == 1', 286],
      ['self.listOfMap.map(e, e).map(e, e).size() == 1', 286],
      ['self.listOfListMap.map(e, e).map(e, e).size() == 1', 286],
      ['self.mapOfMap.map(k, self.mapOfMap[k].map(m, m)).size() == 1', 1585],
      ['self.mapOfListMap.map(k, self.mapOfListMap[k].map(m, m)).size() == 1', 1585],
      ['self.mapOfList.map(k, self.mapOfList[k].map(l, l)).size() == 1', 1585],
      ['self.listOfMap.map(e, e.map(m, m)).size() == 1', 1555],
      ['self.listOfListMap.map(e, e.map(e, e)).size() == 1', 1555],
    ],
  ],
  [
    'bytes',
    vals(bytes, bytes),
    [
      ['self.val1 == self.val2', 314577],
      ["self.val1 == b'AB'", 3],
      ['type(self.val1) == bytes', 4],
      ['size(self.val1) == 2', 4],
    ],
  ],
  [
    'duration format',
    vals(duration, duration),
    [
      ["self.val1 == duration('1h2m3s4ms') && duration('1h2m3s4ms') == self.val1 && self.val1 == self.val2", 16],
      ["self.val1 == duration('1h2m') + duration('3s4ms')", 6],
      ['self.val1.getHours() == 1', 4],
      ['type(self.val1) == google.protobuf.Duration', 4],
    ],
  ],
  [
    'date format',
    vals(date, date),
    [
      ["self.val1 == timestamp('1997-07-16T00:00:00.000Z') && timestamp('1997-07-16T00:00:00.000Z') == self.val1 && self.val1 == self.val2", 14],
      ['self.val1.getDate() == 16', 4],
      ['type(self.val1) == google.protobuf.Timestamp', 4],
    ],
  ],
  [
    'date-time format',
    vals(dateTime, dateTime),
    [
      ["self.val1 == timestamp('2011-08-18T19:03:37.010+01:00') && timestamp('2011-08-18T19:03:37.010+01:00') == self.val1 && self.val1 == self.val2", 16],
      ["self.val1 == timestamp('2011-08-18T00:00:00.000+01:00') + duration('19h3m37s10ms')", 6],
      ["self.val1.getDate('01:00') == 18", 4],
      ['type(self.val1) == google.protobuf.Timestamp', 4],
    ],
  ],
  [
    'conversions',
    vals(int, num, num, num, bool, str, bytes, str, duration, str, dateTime, str, date),
    [
      ['int(self.val2) == self.val1', 5],
      ['double(self.val1) == self.val2', 5],
      ['bytes(self.val6) == self.val7', 629150],
      ['string(self.val1) == self.val6', 314578],
      ["string(self.val4) == '10.5'", 4],
      ['string(self.val7) == self.val6', 629150],
      ['duration(self.val8) == self.val9', 6],
      ['timestamp(self.val10) == self.val11', 6],
      ['string(self.val11) == self.val10', 314578],
      ['timestamp(self.val12) == self.val13', 6],
      ['string(self.val13) == self.val12', 314578],
    ],
  ],
  [
    'integers',
    vals(int, int, int, int, int, int),
    [
      // The rows the table writes with fmt.Sprintf: math.MaxInt64 and math.MaxInt32.
      ['self.val1 == 9223372036854775807 && 9223372036854775807 == self.val1 && self.val1 == self.val2', 8],
      ['self.val3 + 1 == 2147483647 + 1', 5],
      ['self.val1 == self.val6', 4],
      ['type(self.val1) == int', 4],
    ],
  ],
  [
    'numbers',
    vals(num, num, num, num, num, num, num),
    [
      // fmt.Sprintf("%f", math.MaxFloat64): every digit, then six decimals.
      [`self.val1 == ${MAX_FLOAT} && ${MAX_FLOAT} == self.val1 && self.val1 == self.val2`, 8],
      ['self.val1 == self.val6', 4],
      ['type(self.val1) == double', 4],
      ['type(self.val7) == double', 4],
      ['self.val7 == 1.0', 2],
    ],
  ],
  [
    'numeric comparisons',
    vals(int, num, num, num, num, num, num),
    [
      ['double(self.val1) < self.val4', 6],
      ['self.val1 < int(self.val4)', 6],
      ['double(self.val1) < self.val5', 6],
      ['self.val1 < int(self.val5)', 6],
      ['double(self.val1) < self.val6', 6],
      ['self.val1 < int(self.val6)', 6],
      ['double(5) < 10.0', 2],
      ['5 < int(10.0)', 2],
      ['double(self.val1) < 10.0', 4],
    ],
  ],
  [
    'unicode strings',
    vals(str, str),
    [
      ["self.val1 == 'Rook takes 👑' && 'Rook takes 👑' == self.val1 && self.val1 == self.val2", 314585],
      ["self.val1.startsWith('Rook')", 3],
      ["!self.val1.startsWith('knight')", 4],
      ["self.val1.matches('^[^0-9]*$')", 943721],
      ["!self.val1.matches('^[0-9]*$')", 629149],
      ['type(self.val1) == string', 4],
      ['size(self.val1) == 12', 4],
      ["self.val1.charAt(3) == 'k'", 4],
      ["self.val1.indexOf('o') == 1", 314576],
      ["self.val1.indexOf('o', 2) == 2", 314576],
      ["self.val1.replace(' ', 'x') == 'Rookxtakesx👑'", 629150],
      ["self.val1.replace(' ', 'x', 1) == 'Rookxtakes 👑'", 629150],
      ["self.val1.split(' ') == ['Rook', 'takes', '👑']", 629159],
      ["self.val1.split(' ', 2) == ['Rook', 'takes 👑']", 629159],
      ["self.val1.substring(5) == 'takes 👑'", 314576],
      ["self.val1.substring(0, 4) == 'Rook'", 314576],
      ["self.val1.substring(4, 10).trim() == 'takes'", 629149],
      ["self.val1.upperAscii() == 'ROOK TAKES 👑'", 314577],
      ["self.val1.lowerAscii() == 'rook takes 👑'", 314577],
      ['self.val1.lowerAscii() == self.val1.lowerAscii()', 943723],
    ],
  ],
  [
    'escaped strings',
    vals(str, str),
    [
      ["self.val1 == 'l1\\nl2' && 'l1\\nl2' == self.val1 && self.val1 == self.val2", 314583],
      ["self.val1 == '''l1\nl2'''", 3],
    ],
  ],
  [
    'booleans',
    vals(bool, bool, bool, bool),
    [
      ['self.val1 == true && true == self.val1 && self.val1 == self.val2', 8],
      ['self.val1 != self.val4', 4],
      ['type(self.val1) == bool', 4],
    ],
  ],
  [
    'enums',
    obj({ enumStr: { type: 'string', enum: ['Pending', 'Available', 'Bound', 'Released', 'Failed'] } }),
    [
      ["self.enumStr == 'Pending'", 3],
      ["self.enumStr in ['Pending', 'Available']", 14],
    ],
  ],
  [
    'lists',
    vals(list(int), list(int)),
    [
      ['self.val1 == [1, 2, 3] && [1, 2, 3] == self.val1 && self.val1 == self.val2', 157317],
      ['1 in self.val1', 1572865],
      ['self.val2[0] in self.val1', 1572868],
      ['!(0 in self.val1)', 1572866],
      ['self.val1 + self.val2 == [1, 2, 3, 1, 2, 3]', 16],
      ['self.val1 + [4, 5] == [1, 2, 3, 4, 5]', 24],
      ['has(self.val1)', 1],
      ['has(self.val1) && has(self.val2)', 2],
      ['!has(self.val1)', 2],
      ['self.val1.all(k, size(self.val1) > 0)', 11010044],
      ['self.val1.exists_one(k, self.val1 == [2])', 23592949],
      ['!self.val1.exists_one(k, size(self.val1) > 0)', 9437183],
      ['size(self.val1) == 2', 4],
      ['size(self.val1.filter(k, size(self.val1) > 1)) == 1', 26738686],
    ],
  ],
  [
    'listSets',
    vals(listSet(str), listSet(str)),
    [
      ["self.val1 == ['c', 'b', 'a']", 13],
      ['self.val1 == self.val2', 104862],
      ["'a' in self.val1", 1048577],
      ['self.val2[0] in self.val1', 1048580],
      ["!('x' in self.val1)", 1048578],
      ["self.val1 + self.val2 == ['a', 'b', 'c']", 16],
      ["self.val1 + ['c', 'd'] == ['a', 'b', 'c', 'd']", 24],
      ['has(self.val1)', 1],
      ['has(self.val1) && has(self.val2)', 2],
      ['!has(self.val1)', 2],
      ['self.val1.all(k, size(self.val1) > 0)', 7340028],
      ["self.val1.exists_one(k, self.val1 == ['a'])", 15728629],
      ['!self.val1.exists_one(k, size(self.val1) > 0)', 6291455],
      ['size(self.val1) == 2', 4],
      ['size(self.val1.filter(k, size(self.val1) > 1)) == 1', 17825790],
    ],
  ],
  [
    'listMaps',
    obj({ objs: list(listMap(['k'], obj({ k: str, v: str }))) }),
    [
      ['self.objs[0] == self.objs[1]', 104864],
      ['self.objs[0] + self.objs[2] == self.objs[2]', 104868],
      ['self.objs[2] + self.objs[0] == self.objs[0]', 104868],
      ['self.objs[0] == [self.objs[0][0], self.objs[0][1]]', 22],
      ['self.objs[0] == [self.objs[0][1], self.objs[0][0]]', 22],
      ['self.objs[2] + [self.objs[0][0], self.objs[0][1]] == self.objs[0]', 104883],
      ['size(self.objs[0] + [self.objs[3][0]]) == 3', 20],
      ['has(self.objs)', 1],
      ['has(self.objs) && has(self.objs)', 2],
      ['!has(self.objs)', 2],
      ['self.objs[0].all(k, size(self.objs[0]) > 0)', 8388604],
      ['self.objs[0].exists_one(k, size(self.objs[0]) > 0)', 7340030],
      ['!self.objs[0].exists_one(k, size(self.objs[0]) > 0)', 7340031],
      ['size(self.objs[0]) == 2', 5],
      ['size(self.objs[0].filter(k, size(self.objs[0]) > 1)) == 1', 18874366],
    ],
  ],
  [
    'maps',
    vals(map(str), map(str)),
    [
      ['self.val1 == self.val2', 39326],
      ["'k1' in self.val1", 3],
      ["!('k3' in self.val1)", 4],
      ["self.val1 == {'k1': 'a', 'k2': 'b'}", 33],
      ['has(self.val1)', 1],
      ['has(self.val1) && has(self.val2)', 2],
      ['!has(self.val1)', 2],
      ['self.val1.all(k, size(self.val1) > 0)', 2752508],
      ['self.val1.exists_one(k, size(self.val1) > 0)', 2359294],
      ['!self.val1.exists_one(k, size(self.val1) > 0)', 2359295],
      ['size(self.val1) == 2', 4],
      ['size(self.val1.filter(k, size(self.val1) > 1)) == 1', 6684670],
    ],
  ],
  ['objects', obj({ objs: list(obj({ f1: str, f2: str })) }), [['self.objs[0] == self.objs[1]', 6]]],
  [
    'object access',
    obj({ a: obj({ b: int, c: int, d: { ...int, nullable: true } }), a1: obj({ b1: obj({ c1: int }), d2: obj({ e2: int }) }) }),
    [
      ['has(self.a.b)', 2],
      ['has(self.a1.b1.c1)', 3],
      ['!(has(self.a1.d2) && has(self.a1.d2.e2))', 6],
      ['!has(self.a1.d2)', 3],
      ['has(self.a)', 1],
      ['has(self.a) && has(self.a1)', 2],
      ['!has(self.a)', 2],
    ],
  ],
  [
    'map access',
    obj({ val: map(int) }),
    [
      ["!('a' in self.val)", 4],
      ["'b' in self.val", 3],
      ["!('c' in self.val)", 4],
      ["'d' in self.val", 3],
      ['!has(self.val.a)', 3],
      ['has(self.val.b)', 2],
      ['!has(self.val.c)', 3],
      ['has(self.val.d)', 2],
      ['self.val.all(k, self.val[k] > 0)', 3595115],
      ['self.val.exists_one(k, self.val[k] == 2)', 2696338],
      ['!self.val.exists_one(k, self.val[k] > 0)', 3145728],
      ['size(self.val) == 2', 4],
      ['size(self.val.filter(k, self.val[k] > 1)) == 1', 8089017],
    ],
  ],
  [
    'listMap access',
    obj({ listMap: listMap(['k'], obj({ k: str, v: str, v2: str })) }),
    [
      ['has(self.listMap[0].v)', 3],
      ["self.listMap.all(m, m.k.startsWith('a'))", 6291453],
      ["self.listMap.all(m, !has(m.v2) || m.v2 == 'z')", 8388603],
      ["self.listMap.exists(m, m.k.endsWith('1'))", 7340028],
      ["self.listMap.exists_one(m, m.k == 'a3')", 5242879],
      ["!self.listMap.all(m, m.k.endsWith('1'))", 6291454],
      ["!self.listMap.exists(m, m.v == 'x')", 7340029],
      ["!self.listMap.exists_one(m, m.k.startsWith('a'))", 5242880],
      ["size(self.listMap.filter(m, m.k == 'a1')) == 1", 16777215],
      ["self.listMap.exists(m, m.k == 'a1' && m.v == 'b1')", 10485753],
      ["self.listMap.map(m, m.v).exists(v, v == 'b1')", 19922939],
      ["self.listMap.exists(m, has(m.v2) && m.v2 == 'z')", 8388603],
      ["!self.listMap.all(m, has(m.v2) && m.v2 != 'z')", 7340029],
      ["self.listMap.exists_one(m, has(m.v2) && m.v2 == 'z')", 6291454],
      ["self.listMap.filter(m, has(m.v2) && m.v2 == 'z').size() == 1", 17825790],
      ["self.listMap.map(m, has(m.v2) && m.v2 == 'z', m.v2).size() == 1", 18874365],
      ["self.listMap.filter(m, has(m.v2) && m.v2 == 'z').map(m, m.v2).size() == 1", 32505851],
      ["self.listMap.exists(m, m.v2 == 'z')", 7340028],
      ["!self.listMap.all(m, m.v2 != 'z')", 6291454],
    ],
  ],
  [
    'list access',
    obj({ array: list(int) }),
    [
      ['2 in self.array', 1572865],
      ['self.array.all(e, e > 0)', 7864318],
      ['self.array.exists(e, e > 2)', 9437181],
      ['self.array.exists_one(e, e > 4)', 6291456],
      ['!self.array.all(e, e < 2)', 7864319],
      ['!self.array.exists(e, e < 0)', 9437182],
      ['!self.array.exists_one(e, e == 2)', 4718594],
      ['self.array.all(e, e < 100)', 7864318],
      ['size(self.array.filter(e, e%2 == 0)) == 3', 25165823],
      ['self.array.map(e, e * 20).filter(e, e > 50).exists(e, e == 60)', 53477367],
      ['size(self.array) == 8', 4],
    ],
  ],
  [
    'listSet access',
    obj({ set: list(int) }),
    [
      ['3 in self.set', 1572865],
      ['self.set.all(e, e > 0)', 7864318],
      ['self.set.exists(e, e > 3)', 9437181],
      ['self.set.exists_one(e, e == 3)', 4718593],
      ['!self.set.all(e, e < 3)', 7864319],
      ['!self.set.exists(e, e < 0)', 9437182],
      ['!self.set.exists_one(e, e > 3)', 6291457],
      ['self.set.all(e, e < 10)', 7864318],
      ['size(self.set.filter(e, e%2 == 0)) == 2', 25165823],
      ['self.set.map(e, e * 20).filter(e, e > 50).exists_one(e, e == 60)', 50331642],
      ['size(self.set) == 5', 4],
    ],
  ],
  [
    'typemeta and objectmeta access specified',
    obj({ kind: str, apiVersion: str, metadata: obj({ name: str, generateName: str }) }),
    [
      ["self.kind == 'Pod'", 3],
      ["self.apiVersion == 'v1'", 3],
      ["self.metadata.name == 'foo'", 4],
      ["self.metadata.generateName == 'pickItForMe'", 5],
    ],
  ],
  [
    'string in intOrString',
    obj({ something: intOrString }),
    [
      ["type(self.something) == int ? self.something == 1 : self.something == '25%'", 7],
      ["type(self.something) == string && self.something == '25%'", 7],
      ["self.something == '25%'", 3],
      ['self.something != 1', 3],
      ["self.something == 1 || self.something == '25%'", 6],
      ["self.something == '25%' || self.something == 1", 6],
      ["self.something != ['anything']", 13],
    ],
  ],
  [
    'int in intOrString',
    obj({ something: intOrString }),
    [
      ["type(self.something) == int ? self.something == 1 : self.something == '25%'", 7],
      ['type(self.something) == int && self.something == 1', 7],
      ['self.something == 1', 3],
      ["self.something != 'some string'", 4],
      ["self.something == 1 || self.something == '25%'", 6],
      ["self.something == '25%' || self.something == 1", 6],
      ["self.something != ['anything']", 13],
    ],
  ],
  ['null in intOrString', obj({ something: { ...intOrString, nullable: true } }), [['!has(self.something)', 2]]],
  [
    'percent comparison using intOrString',
    obj({ min: intOrString, current: int, available: int }),
    [
      ["type(self.min) == string && self.min.matches(r'(\\d+(\\.\\d+)?%)')", 1258298],
      ["type(self.min) == int ? self.current <= self.min : double(self.current) / double(self.available) >= double(self.min.replace('%', '')) / 100.0", 629162],
    ],
  ],
  [
    'field nullability',
    obj({
      unsetPlainStr: str,
      unsetDefaultedStr: { ...str, default: 'default value' },
      unsetNullableStr: { ...str, nullable: true },
      setPlainStr: str,
      setDefaultedStr: { ...str, default: 'default value' },
      setNullableStr: { ...str, nullable: true },
      setToNullNullableStr: { ...str, nullable: true },
    }),
    [
      ['!has(self.unsetPlainStr)', 2],
      ["has(self.unsetDefaultedStr) && self.unsetDefaultedStr == 'default value'", 5],
      ['!has(self.unsetNullableStr)', 2],
      ["has(self.setPlainStr) && self.setPlainStr == 'v1'", 4],
      ["has(self.setDefaultedStr) && self.setDefaultedStr == 'v2'", 4],
      ["has(self.setNullableStr) && self.setNullableStr == 'v3'", 4],
      ['type(self.setNullableStr) != null_type', 4],
      ['!has(self.setToNullNullableStr)', 2],
    ],
  ],
  [
    'null values in container types',
    obj({ m: map({ ...str, nullable: true }), l: list({ ...str, nullable: true }), s: listSet({ ...str, nullable: true }) }),
    [
      ['self.m.size() == 2', 4],
      ["'a' in self.m", 3],
      ["type(self.m['a']) == null_type", 5],
    ],
  ],
  [
    'object types are not accessible',
    obj({ nestedInMap: map(obj({ inMapField: int })), nestedInList: list(obj({ inListField: int })) }),
    [
      ['type(self) == type(self)', 1844674407370955268],
      ["type(self.nestedInMap['k1']) == type(self.nestedInMap['k2'])", 1844674407370955272],
    ],
  ],
  [
    'listMaps with unsupported identity characters in property names',
    obj({ objs: list(listMap(['k!', 'k.'], obj({ 'k!': str, 'k.': str }))) }),
    [
      ['self.objs[0] == self.objs[1]', 104864],
      ["self.objs[0][0].k__dot__ == '1'", 6],
    ],
  ],
  [
    'quantity',
    vals(str, str),
    [
      ['isQuantity(self.val1)', 314575],
      ['isQuantity(self.val2)', 314575],
      ['isQuantity("200M")', 1],
      ['isQuantity("20Mi")', 1],
      ['quantity("200M") == quantity("0.2G") && quantity("0.2G") == quantity("200M")', 6],
      ['quantity("2M") == quantity("0.002G") && quantity("2000k") == quantity("2M") && quantity("0.002G") == quantity("2000k")', 9],
      ['quantity(self.val1).isLessThan(quantity(self.val2))', 629151],
      ['quantity("50M").isLessThan(quantity("100M"))', 3],
      ['quantity("50Mi").isGreaterThan(quantity("50M"))', 3],
      ['quantity("200M").compareTo(quantity("0.2G")) == 0', 4],
      ['quantity("50k").add(quantity("20")) == quantity("50.02k")', 5],
      ['quantity("50k").sub(20) == quantity("49980")', 4],
      ['quantity("50").isInteger()', 2],
      ['quantity(self.val1).isInteger()', 314576],
    ],
  ],
  [
    'optionals',
    obj({ obj: obj({ field: str, absentField: str }), m: map(str), l: list(str) }),
    [
      ["optional.of('a') != optional.of('b')", 1844674407370955266],
      ["optional.of('a') != optional.none()", 1844674407370955266],
      ["optional.of('a').hasValue()", 2],
      ["optional.of('a').or(optional.of('a')).hasValue()", 4],
      ["optional.none().or(optional.of('a')).hasValue()", 4],
      ["optional.of('a').optMap(v, v == 'value').hasValue()", 18],
      ["self.obj.?field == optional.of('a')", 1844674407370955268],
      ['self.obj.?absentField == optional.none()', 1844674407370955268],
      ["self.obj.?field.orValue('v') == 'a'", 5],
      ["self.m[?'k'] == optional.of('v')", 1844674407370955268],
      ["self.l[?0] == optional.of('a')", 1844674407370955268],
      ['optional.ofNonZeroValue(1).hasValue()', 2],
      ['optional.of([1, 2, 3, 4, 5]).optMap(v, v.size()).hasValue()', 38],
      ["optional.of('abcdefgabcdefg').optMap(v, v.size()).hasValue()", 18],
      ["self.l[?0].optMap(v, v == 'a').hasValue()", 22],
    ],
  ],
];

/**
 * Rows that cannot match yet, with why. Kubernetes' comparison of two values its estimator cannot
 * size (type(self) == type(self), optionals) costs nearly 2^64; orchd's doubles cannot spell that
 * number exactly, so those rows are checked as "over any limit" instead (below).
 */
const SKIPS = new Map<string, string>([]);
const HUGE = 1844674407370955000;

function costOf(s: S, rule: string): number {
  const r = compileSchemaRule({ rule }, s, 'x-kubernetes-validations[0]');
  if (!r.ok) throw new Error(r.errors.map((e) => e.detail).join('; '));
  return r.rule.cost;
}

describe("the static cost of a rule, as Kubernetes' TestCelEstimatedCostStability pins it", () => {
  for (const [name, schema, rows] of sections) {
    describe(name, () => {
      const run = rows.filter(([rule]) => !SKIPS.has(rule));
      test.each(run)('%s', (rule, cost) => {
        if (cost > HUGE) expect(costOf(schema, rule)).toBeGreaterThan(HUGE);
        else expect(costOf(schema, rule)).toBe(cost);
      });
    });
  }
  test('every skip names a row of the tables', () => {
    const all = sections.flatMap(([, , rows]) => rows.map(([r]) => r));
    for (const rule of SKIPS.keys()) expect(all).toContain(rule);
  });
});
