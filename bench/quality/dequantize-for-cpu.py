#!/usr/bin/env python3
"""Copies a GGUF model with its Q5_0 and Q8_0 tensors stored as F16 (the same weights,
dequantized), everything else byte for byte. The local provider's llama.cpp build multiplies
those two types with AVX-VNNI instructions (`vpdpbusd`, VEX-encoded); on a CPU without them
(AVX-512 VNNI alone is not enough) it dies with "Illegal instruction" while loading
qwen2.5-coder-0.5b-instruct. The 1.5B model (Q4_K/Q6_K) is not affected. Needs `gguf` and
`numpy` from PyPI.

    python3 dequantize-for-cpu.py qwen2.5-coder-0.5b-instruct.gguf qwen05-f16.gguf
"""
import sys

import gguf
import numpy as np
from gguf import GGMLQuantizationType as Kind

DEQUANTIZED = (Kind.Q5_0, Kind.Q8_0)


def main(source, target):
    reader = gguf.GGUFReader(source)
    architecture = reader.fields["general.architecture"].contents()
    writer = gguf.GGUFWriter(target, architecture, endianess=reader.endianess)
    for field in reader.fields.values():
        if field.name == "general.architecture" or field.name.startswith("GGUF."):
            continue  # written by the writer itself
        value_type = field.types[0]
        item_type = field.types[-1] if value_type == gguf.GGUFValueType.ARRAY else None
        writer.add_key_value(field.name, field.contents(), value_type, sub_type=item_type)
    tensors = []
    for tensor in reader.tensors:
        if tensor.tensor_type in DEQUANTIZED:
            data = gguf.quants.dequantize(tensor.data, tensor.tensor_type).astype(np.float16)
            tensors.append((tensor.name, data, Kind.F16))
        else:
            tensors.append((tensor.name, tensor.data, tensor.tensor_type))
    for name, data, kind in tensors:
        writer.add_tensor_info(name, data.shape, data.dtype, data.nbytes, kind)
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_ti_data_to_file()
    for _, data, _ in tensors:
        writer.write_tensor_data(data, tensor_endianess=reader.endianess)
    writer.close()


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
