// RUN: ipu-opt %S/Inputs/tile-mapping-attention.mlir -p 'plan-ops{target=sim16},map-tiles,screen-tiles{target=sim16},select-finalist{target=sim16}' --target sim16 --log-level info 2>&1 | filecheck %s --check-prefix=SCREEN
// RUN: ipu-opt %S/Inputs/tile-mapping-attention.mlir -p 'plan-ops{target=sim16},map-tiles,screen-tiles{target=sim16},select-finalist{target=sim16}' --target sim16 | filecheck %s --check-prefix=TILEMAP
// RUN: ipu-opt %S/Inputs/tile-mapping-attention.mlir -p 'plan-ops{target=sim16},map-tiles,screen-tiles{target=sim16},select-finalist{target=sim16},schedule-exchange{target=sim16}' --target sim16 | filecheck %s --check-prefix=EXCHANGE
// RUN: ipu-opt %S/Inputs/tile-mapping-attention.mlir -p 'plan-ops{target=sim16},map-tiles,screen-tiles,select-finalist,schedule-exchange,join-phases,place-storage,lower-to-tasm' --target sim16 | filecheck %s --check-prefix=TASM

// sim16 has 4 columns of 4 tiles; a route costs 108 cycles in one column and 4 more per column
// crossed. screen-tiles screens each mapped finalist's mappings by exchange resource load (endpoint
// and shared pair send-bus words plus the longest route per phase, weighted by repeats); on this
// attention block (Inputs/tile-mapping-attention.mlir), interleaving pairs of tiles (block 16,
// width 2) shortens 12 cycles of routes.

// SCREEN: screened tile mappings by exchange resource load finalist=0 candidates=4 baseline_cycles=6228 candidate_cycles=6216 {{.*}} mapping=block=16,width=2
// SCREEN: screened tile mappings by exchange resource load finalist=1 {{.*}} baseline_pressure=1670 candidate_pressure=1475 mapping=block=16,width=2
// SCREEN: scheduled operator-plan finalist finalist=0 mapped=block=16,width=2
// SCREEN: selected physically scheduled operator-plan finalist selected=0

// The selected tilemap function carries the mapping screen-tiles chose for it: two integers,
// whatever the tile count.
// TILEMAP: func.func @main() attributes {{{.*}}tilemap.mapping = #tilemap.mapping<block = 16, width = 2>{{.*}}} {
// TILEMAP-NOT: plan.tile_mapping

// Every scheduled phase records its longest route under the mapping.
// EXCHANGE: exchange.phase %q transfers
// EXCHANGE: route_cycles = 116
// EXCHANGE: exchange.phase %k transfers
// EXCHANGE: route_cycles = 116
// EXCHANGE: exchange.phase %a_state transfers
// EXCHANGE: route_cycles = 108

// ... and the tile programs' module keeps it for the package.
// TASM: builtin.module attributes {{{.*}}tasm.tile_mapping = #tilemap.mapping<block = 16, width = 2>
