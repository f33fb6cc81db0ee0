// Generated: `TupleGet` for tuples of 1 to 8 elements.

impl<T0: Clone> TupleGet<0> for (T0,) {
    type Out = T0;
    fn get(&self) -> T0 {
        self.0.clone()
    }
}
impl<T0: Clone, T1: Clone> TupleGet<0> for (T0, T1) {
    type Out = T0;
    fn get(&self) -> T0 {
        self.0.clone()
    }
}
impl<T0: Clone, T1: Clone> TupleGet<1> for (T0, T1) {
    type Out = T1;
    fn get(&self) -> T1 {
        self.1.clone()
    }
}
impl<T0: Clone, T1: Clone, T2: Clone> TupleGet<0> for (T0, T1, T2) {
    type Out = T0;
    fn get(&self) -> T0 {
        self.0.clone()
    }
}
impl<T0: Clone, T1: Clone, T2: Clone> TupleGet<1> for (T0, T1, T2) {
    type Out = T1;
    fn get(&self) -> T1 {
        self.1.clone()
    }
}
impl<T0: Clone, T1: Clone, T2: Clone> TupleGet<2> for (T0, T1, T2) {
    type Out = T2;
    fn get(&self) -> T2 {
        self.2.clone()
    }
}
impl<T0: Clone, T1: Clone, T2: Clone, T3: Clone> TupleGet<0> for (T0, T1, T2, T3) {
    type Out = T0;
    fn get(&self) -> T0 {
        self.0.clone()
    }
}
impl<T0: Clone, T1: Clone, T2: Clone, T3: Clone> TupleGet<1> for (T0, T1, T2, T3) {
    type Out = T1;
    fn get(&self) -> T1 {
        self.1.clone()
    }
}
impl<T0: Clone, T1: Clone, T2: Clone, T3: Clone> TupleGet<2> for (T0, T1, T2, T3) {
    type Out = T2;
    fn get(&self) -> T2 {
        self.2.clone()
    }
}
impl<T0: Clone, T1: Clone, T2: Clone, T3: Clone> TupleGet<3> for (T0, T1, T2, T3) {
    type Out = T3;
    fn get(&self) -> T3 {
        self.3.clone()
    }
}
impl<T0: Clone, T1: Clone, T2: Clone, T3: Clone, T4: Clone> TupleGet<0> for (T0, T1, T2, T3, T4) {
    type Out = T0;
    fn get(&self) -> T0 {
        self.0.clone()
    }
}
impl<T0: Clone, T1: Clone, T2: Clone, T3: Clone, T4: Clone> TupleGet<1> for (T0, T1, T2, T3, T4) {
    type Out = T1;
    fn get(&self) -> T1 {
        self.1.clone()
    }
}
impl<T0: Clone, T1: Clone, T2: Clone, T3: Clone, T4: Clone> TupleGet<2> for (T0, T1, T2, T3, T4) {
    type Out = T2;
    fn get(&self) -> T2 {
        self.2.clone()
    }
}
impl<T0: Clone, T1: Clone, T2: Clone, T3: Clone, T4: Clone> TupleGet<3> for (T0, T1, T2, T3, T4) {
    type Out = T3;
    fn get(&self) -> T3 {
        self.3.clone()
    }
}
impl<T0: Clone, T1: Clone, T2: Clone, T3: Clone, T4: Clone> TupleGet<4> for (T0, T1, T2, T3, T4) {
    type Out = T4;
    fn get(&self) -> T4 {
        self.4.clone()
    }
}
impl<T0: Clone, T1: Clone, T2: Clone, T3: Clone, T4: Clone, T5: Clone> TupleGet<0> for (T0, T1, T2, T3, T4, T5) {
    type Out = T0;
    fn get(&self) -> T0 {
        self.0.clone()
    }
}
impl<T0: Clone, T1: Clone, T2: Clone, T3: Clone, T4: Clone, T5: Clone> TupleGet<1> for (T0, T1, T2, T3, T4, T5) {
    type Out = T1;
    fn get(&self) -> T1 {
        self.1.clone()
    }
}
impl<T0: Clone, T1: Clone, T2: Clone, T3: Clone, T4: Clone, T5: Clone> TupleGet<2> for (T0, T1, T2, T3, T4, T5) {
    type Out = T2;
    fn get(&self) -> T2 {
        self.2.clone()
    }
}
impl<T0: Clone, T1: Clone, T2: Clone, T3: Clone, T4: Clone, T5: Clone> TupleGet<3> for (T0, T1, T2, T3, T4, T5) {
    type Out = T3;
    fn get(&self) -> T3 {
        self.3.clone()
    }
}
impl<T0: Clone, T1: Clone, T2: Clone, T3: Clone, T4: Clone, T5: Clone> TupleGet<4> for (T0, T1, T2, T3, T4, T5) {
    type Out = T4;
    fn get(&self) -> T4 {
        self.4.clone()
    }
}
impl<T0: Clone, T1: Clone, T2: Clone, T3: Clone, T4: Clone, T5: Clone> TupleGet<5> for (T0, T1, T2, T3, T4, T5) {
    type Out = T5;
    fn get(&self) -> T5 {
        self.5.clone()
    }
}
impl<T0: Clone, T1: Clone, T2: Clone, T3: Clone, T4: Clone, T5: Clone, T6: Clone> TupleGet<0> for (T0, T1, T2, T3, T4, T5, T6) {
    type Out = T0;
    fn get(&self) -> T0 {
        self.0.clone()
    }
}
impl<T0: Clone, T1: Clone, T2: Clone, T3: Clone, T4: Clone, T5: Clone, T6: Clone> TupleGet<1> for (T0, T1, T2, T3, T4, T5, T6) {
    type Out = T1;
    fn get(&self) -> T1 {
        self.1.clone()
    }
}
impl<T0: Clone, T1: Clone, T2: Clone, T3: Clone, T4: Clone, T5: Clone, T6: Clone> TupleGet<2> for (T0, T1, T2, T3, T4, T5, T6) {
    type Out = T2;
    fn get(&self) -> T2 {
        self.2.clone()
    }
}
impl<T0: Clone, T1: Clone, T2: Clone, T3: Clone, T4: Clone, T5: Clone, T6: Clone> TupleGet<3> for (T0, T1, T2, T3, T4, T5, T6) {
    type Out = T3;
    fn get(&self) -> T3 {
        self.3.clone()
    }
}
impl<T0: Clone, T1: Clone, T2: Clone, T3: Clone, T4: Clone, T5: Clone, T6: Clone> TupleGet<4> for (T0, T1, T2, T3, T4, T5, T6) {
    type Out = T4;
    fn get(&self) -> T4 {
        self.4.clone()
    }
}
impl<T0: Clone, T1: Clone, T2: Clone, T3: Clone, T4: Clone, T5: Clone, T6: Clone> TupleGet<5> for (T0, T1, T2, T3, T4, T5, T6) {
    type Out = T5;
    fn get(&self) -> T5 {
        self.5.clone()
    }
}
impl<T0: Clone, T1: Clone, T2: Clone, T3: Clone, T4: Clone, T5: Clone, T6: Clone> TupleGet<6> for (T0, T1, T2, T3, T4, T5, T6) {
    type Out = T6;
    fn get(&self) -> T6 {
        self.6.clone()
    }
}
impl<T0: Clone, T1: Clone, T2: Clone, T3: Clone, T4: Clone, T5: Clone, T6: Clone, T7: Clone> TupleGet<0> for (T0, T1, T2, T3, T4, T5, T6, T7) {
    type Out = T0;
    fn get(&self) -> T0 {
        self.0.clone()
    }
}
impl<T0: Clone, T1: Clone, T2: Clone, T3: Clone, T4: Clone, T5: Clone, T6: Clone, T7: Clone> TupleGet<1> for (T0, T1, T2, T3, T4, T5, T6, T7) {
    type Out = T1;
    fn get(&self) -> T1 {
        self.1.clone()
    }
}
impl<T0: Clone, T1: Clone, T2: Clone, T3: Clone, T4: Clone, T5: Clone, T6: Clone, T7: Clone> TupleGet<2> for (T0, T1, T2, T3, T4, T5, T6, T7) {
    type Out = T2;
    fn get(&self) -> T2 {
        self.2.clone()
    }
}
impl<T0: Clone, T1: Clone, T2: Clone, T3: Clone, T4: Clone, T5: Clone, T6: Clone, T7: Clone> TupleGet<3> for (T0, T1, T2, T3, T4, T5, T6, T7) {
    type Out = T3;
    fn get(&self) -> T3 {
        self.3.clone()
    }
}
impl<T0: Clone, T1: Clone, T2: Clone, T3: Clone, T4: Clone, T5: Clone, T6: Clone, T7: Clone> TupleGet<4> for (T0, T1, T2, T3, T4, T5, T6, T7) {
    type Out = T4;
    fn get(&self) -> T4 {
        self.4.clone()
    }
}
impl<T0: Clone, T1: Clone, T2: Clone, T3: Clone, T4: Clone, T5: Clone, T6: Clone, T7: Clone> TupleGet<5> for (T0, T1, T2, T3, T4, T5, T6, T7) {
    type Out = T5;
    fn get(&self) -> T5 {
        self.5.clone()
    }
}
impl<T0: Clone, T1: Clone, T2: Clone, T3: Clone, T4: Clone, T5: Clone, T6: Clone, T7: Clone> TupleGet<6> for (T0, T1, T2, T3, T4, T5, T6, T7) {
    type Out = T6;
    fn get(&self) -> T6 {
        self.6.clone()
    }
}
impl<T0: Clone, T1: Clone, T2: Clone, T3: Clone, T4: Clone, T5: Clone, T6: Clone, T7: Clone> TupleGet<7> for (T0, T1, T2, T3, T4, T5, T6, T7) {
    type Out = T7;
    fn get(&self) -> T7 {
        self.7.clone()
    }
}
