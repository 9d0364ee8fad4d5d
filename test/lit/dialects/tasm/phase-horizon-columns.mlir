// RUN: IPU_ROUNDTRIP


// CHECK: tasm.phase 0 lower_bound 4 horizon 4 scheduler "greedy-longest-first" transfers = dense<{{\[\[}}0, 0, 327744, 8, 0, 327712, 8, 1, 2, 4, 1, 1, 1, 1], [2, 4, 327744, 8, 0, 327720, 8, 1, 2, 4, 1, 1, 1, 1], [0, 8, 327744, 8, 4, 327712, 8, 1, 2, 4, 1, 1, 1, 1], [2, 12, 327744, 8, 4, 327720, 8, 1, 2, 4, 1, 1, 1, 1]]> : tensor<4x14xi32>
tasm.phase 0 lower_bound 4 horizon 4 scheduler "greedy-longest-first" transfers = dense<[[0, 0, 327744, 8, 0, 327712, 8, 1, 2, 4, 1, 1, 1, 1], [2, 4, 327744, 8, 0, 327720, 8, 1, 2, 4, 1, 1, 1, 1], [0, 8, 327744, 8, 4, 327712, 8, 1, 2, 4, 1, 1, 1, 1], [2, 12, 327744, 8, 4, 327720, 8, 1, 2, 4, 1, 1, 1, 1]]> : tensor<4x14xi32>
