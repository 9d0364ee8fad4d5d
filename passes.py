"""Every pass by its name, registered lazily (a pass module is imported when the pass is first
asked for): the ladder's passes (`ipu.transforms`) and the frontends' conversion passes
(`ipu.frontends`). `ipu-opt` offers all of them."""

from __future__ import annotations

from collections.abc import Callable

from xdsl.passes import ModulePass


def get_all_passes() -> dict[str, Callable[[], type[ModulePass]]]:
    def convert_precision():
        from ipu.transforms.graph.convert_precision import ConvertPrecisionPass

        return ConvertPrecisionPass

    def raise_graph_ops():
        from ipu.transforms.graph.raise_graph_ops import RaiseGraphOpsPass

        return RaiseGraphOpsPass

    def host_layout():
        from ipu.transforms.graph.host_layout import HostLayoutPass

        return HostLayoutPass

    def expand_windows():
        from ipu.transforms.graph.expand_windows import ExpandWindowsPass

        return ExpandWindowsPass

    def fuse_sibling_matmuls():
        from ipu.transforms.graph.fuse_sibling_matmuls import FuseSiblingMatmulsPass

        return FuseSiblingMatmulsPass

    def fold_attention_scale():
        from ipu.transforms.graph.fold_attention_scale import FoldAttentionScalePass

        return FoldAttentionScalePass

    def stripe_causal_attention():
        from ipu.transforms.graph.stripe_causal_attention import StripeCausalAttentionPass

        return StripeCausalAttentionPass

    def split_attention_heads():
        from ipu.transforms.graph.split_attention_heads import SplitAttentionHeadsPass

        return SplitAttentionHeadsPass

    def unroll_batch_matmul():
        from ipu.transforms.graph.unroll_batch_matmul import UnrollBatchMatmulPass

        return UnrollBatchMatmulPass

    def roll_layers():
        from ipu.transforms.graph.roll_layers import RollLayersPass

        return RollLayersPass

    def partition_stages():
        from ipu.transforms.system.partition_stages import PartitionStagesPass

        return PartitionStagesPass

    def split_tensor_parallel():
        from ipu.transforms.system.tensor_parallel import SplitTensorParallelPass

        return SplitTensorParallelPass

    def drop_checkpoints():
        from ipu.transforms.tilemap.drop_checkpoints import DropCheckpointsPass

        return DropCheckpointsPass

    def plan_ops():
        from ipu.transforms.plan.plan_ops import PlanOpsPass

        return PlanOpsPass

    def plan_decide():
        from ipu.transforms.plan.plan_decide import PlanDecidePass

        return PlanDecidePass

    def plan_materialize():
        from ipu.transforms.plan.plan_materialize import PlanMaterializePass

        return PlanMaterializePass

    def map_tiles():
        from ipu.transforms.tilemap.map_tiles import MapTilesPass

        return MapTilesPass

    def schedule_exchange():
        from ipu.transforms.exchange.schedule_exchange import ScheduleExchangePass

        return ScheduleExchangePass

    def screen_tiles():
        from ipu.transforms.tilemap.screen_tiles import ScreenTilesPass

        return ScreenTilesPass

    def select_finalist():
        from ipu.transforms.tilemap.select_finalist import SelectFinalistPass

        return SelectFinalistPass

    def join_phases():
        from ipu.transforms.exchange.join_phases import JoinPhasesPass

        return JoinPhasesPass

    def place_storage():
        from ipu.transforms.exchange.place_storage import PlaceStoragePass

        return PlaceStoragePass

    def lower_to_tasm():
        from ipu.transforms.tasm.lower_to_tasm import LowerToTasmPass

        return LowerToTasmPass

    def convert_stablehlo_to_graph():
        from ipu.frontends.convert_stablehlo_to_graph import ConvertStablehloToGraphPass

        return ConvertStablehloToGraphPass

    def ipu_compile():
        from ipu.transforms.pipeline import IpuCompilePass

        return IpuCompilePass

    return {
        "convert-stablehlo-to-graph": convert_stablehlo_to_graph,
        "convert-precision": convert_precision,
        "raise-graph-ops": raise_graph_ops,
        "expand-windows": expand_windows,
        "host-layout": host_layout,
        "fuse-sibling-matmuls": fuse_sibling_matmuls,
        "fold-attention-scale": fold_attention_scale,
        "roll-layers": roll_layers,
        "stripe-causal-attention": stripe_causal_attention,
        "partition-stages": partition_stages,
        "split-tensor-parallel": split_tensor_parallel,
        "split-attention-heads": split_attention_heads,
        "unroll-batch-matmul": unroll_batch_matmul,
        "plan-ops": plan_ops,
        "plan-decide": plan_decide,
        "plan-materialize": plan_materialize,
        "map-tiles": map_tiles,
        "drop-checkpoints": drop_checkpoints,
        "schedule-exchange": schedule_exchange,
        "screen-tiles": screen_tiles,
        "select-finalist": select_finalist,
        "join-phases": join_phases,
        "place-storage": place_storage,
        "lower-to-tasm": lower_to_tasm,
        "ipu-compile": ipu_compile,
    }
