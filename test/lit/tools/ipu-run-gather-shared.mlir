// RUN: ipu-opt %s -p 'plan-ops{target=sim16 finalists=1}' --target sim16 | filecheck %s --check-prefix=PLAN
// RUN: python -c "import numpy as np; np.savez('%t.npz', ids=np.array([[60, 0, 20, 21, 40, 41, 59]]), ids2=np.array([60, 19, 20, 39, 40]))"
// RUN: ipu-run %s --target sim16 --inputs %t.npz | filecheck %s
// RUN: ipu-run %s --target sim16 --seed 4 | filecheck %s

// Two lookups in one table, with uneven shapes: 61 rows in 3 row blocks (21, 21, 19), 30 columns
// in 5 blocks of 6, 7 and 5 ids. The first lookup's pinned grid places the table; the second
// reuses that grid rather than exchanging the whole table on every run. The ids of the file sit
// either side of every row-block boundary.
func.func @main(%ids: tensor<1x7xi32>, %ids2: tensor<5xi32>) -> (tensor<7x30xf16>, tensor<5x30xf16>) {
  %emb = graph.parameter "emb" #graph.gaussian<seed = 1, std = 0.5> : tensor<61x30xf16>
  %x = graph.gather %emb, %ids {axis = 0, plan.choice = #plan.choice<gather, grid = [3, 5]>} : (tensor<61x30xf16>, tensor<1x7xi32>) -> tensor<7x30xf16>
  %y = graph.gather %emb, %ids2 {axis = 0} : (tensor<61x30xf16>, tensor<5xi32>) -> tensor<5x30xf16>
  func.return %x, %y : tensor<7x30xf16>, tensor<5x30xf16>
}

// PLAN-NOT: plan.rearrange %emb
// PLAN:     %y_partial = plan.embedding_slice %emb, %ids2 : (!plan.tensor<61x30xf16, #plan.layout<grid = [3, 5], split = [[0], [1]], memory = standard>>
// PLAN-NOT: plan.rearrange %emb

// CHECK: output=output0 samples=210 maximumAbsoluteError=0.000000
// CHECK: output=output1 samples=150 maximumAbsoluteError=0.000000
// CHECK: numericalTest=PASS
