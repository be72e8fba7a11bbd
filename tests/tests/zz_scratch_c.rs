use mempursuit::*;
#[test]
fn scratch() {
    let query = vec![24.901f32, 4.027249e-22, -0.444];
    let candidates = vec![824468.56f32, 824468.56, 824468.56, 824468.56, 824468.56, 206117.14, 824468.56, 0.049142156, 824468.56];
    let options = PursuitOptions { ridge: 1.0, gamma: 1e-300, ..PursuitOptions::default() };
    for rel in [Relevance::PoolOrder, Relevance::Similarity] {
    for k in 1..=3 {
        let s = Selector::new().select(&Input::new(&query, &candidates).with_relevance(rel), k, &Method::Pursuit(options)).unwrap();
        println!("{rel:?} k={k} {:?} {:?}", s.picks, s.weights);
        for st in &s.steps { println!("   {st:?}"); }
    }}
}
